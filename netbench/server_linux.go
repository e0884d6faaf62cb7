//go:build linux

package netbench

import (
	"errors"
	"fmt"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/kbench/kbench/internal/child"
	"github.com/kbench/kbench/internal/peer"
	"github.com/kbench/kbench/internal/thread"
	"golang.org/x/sys/unix"
)

// flowServer is netserver's child for one flow: its own listening socket
// (backlog 5) and its own process (mm=separate: a child process running
// loop, as netserver forks one per test) or OS thread (mm=shared, and
// always when tests set hooks). For CRR it accepts, receives the request,
// sends the response and closes first, so TIME_WAIT lands on this side;
// for RR it serves one connection until the client closes it.
type flowServer struct {
	kind Kind
	pat  *patterns
	lfd  int
	port int

	proc    *child.Proc // the flow's process in mm=separate
	inChild bool        // loop runs in the child: the listening socket's shutdown is the stop

	// The flow's counts so far, which the control connection reads
	// while the flow runs (COUNTS): in memory this process shares with
	// the flow's process (counts) in mm=separate.
	txns    *atomic.Int64 // responses sent
	badReqs *atomic.Int64 // requests with a wrong byte
	counts  *peer.Mem
	served  int64 // transactions answered, for hooks; the thread's own
	counted int64 // transactions counted; published in txns

	stopping atomic.Bool
	files    chan struct{} // a thread's: closed once it has its fd table

	hooks *serverHooks
	err   error // the thread's result, once done is closed
	done  chan struct{}
}

// serverHooks let tests make a server misbehave; nil in benchmarks.
type serverHooks struct {
	// delay, if set, is slept before answering transaction n (from 0).
	delay func(n int64) time.Duration
	// response, if set, replaces the response to transaction n.
	response func(n int64, rsp []byte) []byte
	// uncounted, if set, leaves transaction n out of the count.
	uncounted func(n int64) bool
	// start, if set, runs when the thread starts; an error ends it there.
	start func() error
}

// startFlowServer opens the listening socket on ip and starts the flow's
// process (separate, without hooks) or thread.
func startFlowServer(ip netip.Addr, kind Kind, req, rsp int, separate bool, hooks *serverHooks) (*flowServer, error) {
	lfd, port, err := listenSocket(ip)
	if err != nil {
		return nil, err
	}
	s := &flowServer{kind: kind, pat: newPatterns(req, rsp), lfd: lfd, port: port, hooks: hooks, done: make(chan struct{})}
	if separate && hooks == nil {
		if err := s.startProc(req, rsp); err != nil {
			unix.Close(lfd)
			return nil, err
		}
		return s, nil
	}
	s.txns, s.badReqs = new(atomic.Int64), new(atomic.Int64)
	s.files = make(chan struct{})
	go func() {
		s.err = thread.Run(s.loop)
		if s.err != nil {
			// Refuse the flow's client: queued and later connections
			// would otherwise wait for an accept that never comes.
			unix.Shutdown(s.lfd, unix.SHUT_RDWR)
		}
		close(s.done)
	}()
	// The thread's fd table is copied from the process's when it starts:
	// it is made before the flow is the client's, so that a file the
	// client side opens later (the netstat counters it reads between
	// rounds) is never in the copy.
	select {
	case <-s.files:
	case <-s.done:
	}
	return s, nil
}

// serverArgs and serverCounts are a flow server process's arguments and
// counts.
type (
	serverArgs   struct{ Kind, Req, Rsp int }
	serverCounts struct{ Txns, BadReqs int64 }
)

// countsSize is a flow process's counts in the memory it shares with the
// server: responses sent, then requests with a wrong byte.
const countsSize = 16

// The flow server's role: file 0 is its listening socket, file 1 the
// memory its counts go in.
var _ = child.Register("netbench-server", func(c *child.Ctx) error {
	var a serverArgs
	if err := c.Args(&a); err != nil {
		return err
	}
	m, err := peer.MapMem(c.File(1), countsSize)
	if err != nil {
		return err
	}
	defer m.Close()
	s := &flowServer{kind: Kind(a.Kind), pat: newPatterns(a.Req, a.Rsp), lfd: c.File(0), inChild: true,
		txns: m.Int64(0), badReqs: m.Int64(8)}
	if err := c.Ready(nil); err != nil {
		return err
	}
	err = s.loop()
	if rerr := c.Result(serverCounts{s.txns.Load(), s.badReqs.Load()}); err == nil {
		err = rerr
	}
	return err
})

// startProc starts the flow's process and, once it has ended, takes its
// counts and its error.
func (s *flowServer) startProc(req, rsp int) error {
	m, err := peer.NewMem("kbench-netbench-server", countsSize)
	if err != nil {
		return err
	}
	s.counts, s.txns, s.badReqs = m, m.Int64(0), m.Int64(8)
	p, err := child.Start(child.Spec{Role: "netbench-server", Args: serverArgs{int(s.kind), req, rsp}, Fds: []int{s.lfd, m.Fd()}})
	if err == nil {
		if err = p.Ready(); err == nil {
			err = p.Go()
		}
	}
	if err != nil {
		if p != nil {
			p.Kill()
		}
		m.Close()
		return err
	}
	s.proc = p
	go func() {
		var c serverCounts
		err := p.Result(&c)
		if err == nil {
			// The same counts the process kept in the shared memory; a
			// process that failed keeps what it had counted there.
			s.txns.Store(c.Txns)
			s.badReqs.Store(c.BadReqs)
			err = p.Wait()
		}
		s.err = err
		if err != nil {
			unix.Shutdown(s.lfd, unix.SHUT_RDWR)
		}
		close(s.done)
	}()
	return nil
}

// stopped reports whether err from accept means the flow was told to
// stop: the stopping flag in-process; in a child, which cannot see it,
// the EINVAL accept returns once the listening socket is shut down.
func (s *flowServer) stopped(err error) bool {
	return s.stopping.Load() || s.inChild && err == unix.EINVAL
}

// yieldCheck is how many RR requests the server answers between readings
// of the clock for its Yielder: netserver reads no clock per request.
const yieldCheck = 16

func (s *flowServer) loop() (err error) {
	if err := ownFiles(s.lfd, !s.inChild); err != nil {
		return err
	}
	if s.files != nil {
		close(s.files)
	}
	if h := s.hooks; h != nil && h.start != nil {
		if err := h.start(); err != nil {
			return err
		}
	}
	var ac acceptConn
	var y thread.Yielder
	defer func() { err = errors.Join(err, y.Err()) }()
	req := make([]byte, len(s.pat.req[0]))
	for {
		y.Tick(thread.Clock())
		fd, err := ac.accept(s.lfd)
		if err != nil {
			if s.stopped(err) {
				return nil
			}
			if err == unix.ECONNABORTED {
				continue
			}
			return fmt.Errorf("accept: %w", err)
		}
		if s.stopping.Load() {
			rawClose(fd)
			return nil
		}
		if s.kind == CRR {
			_, err = s.serve(fd, req)
		} else {
			for n := 0; ; n++ {
				if n%yieldCheck == 0 {
					y.Tick(thread.Clock())
				}
				var more bool
				more, err = s.serve(fd, req)
				if err != nil || !more {
					break
				}
			}
		}
		rawClose(fd) // first, for CRR: TIME_WAIT stays here
		if err != nil {
			if s.stopping.Load() {
				return nil
			}
			return err
		}
		if s.kind == RR {
			// netserver serves one RR connection per test.
			return nil
		}
	}
}

// serve answers one request on fd. It returns false, nil when the client
// closed the connection before sending anything (the end of an RR test).
func (s *flowServer) serve(fd int, req []byte) (bool, error) {
	n, err := recvFull(fd, req)
	if err != nil {
		return false, err
	}
	if n == 0 && s.kind == RR {
		return false, nil
	}
	if n < len(req) {
		return false, fmt.Errorf("client closed after %d of %d request bytes", n, len(req))
	}
	k := s.pat.requestTag(req)
	if k < 0 {
		s.badReqs.Add(1)
		k = int(req[0])
	}
	rsp := s.pat.rsp[k]
	count := int64(1)
	if h := s.hooks; h != nil {
		n := s.served
		if h.delay != nil {
			time.Sleep(h.delay(n))
		}
		if h.response != nil {
			rsp = h.response(n, rsp)
		}
		if h.uncounted != nil && h.uncounted(n) {
			count = 0
		}
	}
	s.served++
	// Counted before the response, so a client that has its response
	// (and a parent that has the client's count) knows the server has
	// counted its transaction. One thread writes it: a plain store, no
	// locked add on the transaction's path.
	s.counted += count
	s.txns.Store(s.counted)
	if err := sendAll(fd, rsp); err != nil {
		return false, err
	}
	return true, nil
}

// stopFlows stops flows together and returns each flow's result: it wakes
// every thread waiting in accept (shutdown of its listening socket makes
// accept fail with EINVAL), waits up to wait for them all, and closes the
// listening sockets of those that ended. A thread serving a
// connection returns when its client closes it: the data socket is in the
// thread's own fd table, out of reach here. A local client's sockets
// close at the latest when its thread ends; a remote client that neither
// finishes nor closes (its host gone) leaves the thread blocked in recv
// until the server process exits.
func stopFlows(flows []*flowServer, wait time.Duration) []error {
	for _, s := range flows {
		s.stopping.Store(true)
		unix.Shutdown(s.lfd, unix.SHUT_RDWR)
	}
	errs := make([]error, len(flows))
	timeout := time.After(wait)
	timedOut := false
	for i, s := range flows {
		if !timedOut {
			select {
			case <-s.done:
			case <-timeout:
				timedOut = true
			}
		}
		if s.proc != nil && !isDone(s.done) {
			// A process can be ended: kill it, and its listening
			// socket and connections close with it.
			s.proc.Kill()
			<-s.done
			unix.Close(s.lfd)
			errs[i] = fmt.Errorf("flow server process still running %v after stop (a client that neither finished nor closed its connection?): killed", wait)
			continue
		}
		select {
		case <-s.done:
			unix.Close(s.lfd)
			errs[i] = s.err
		default:
			// Its listening socket stays open: the thread may still
			// return to accept on it.
			errs[i] = fmt.Errorf("flow server thread still running %v after stop (a client that neither finished nor closed its connection?)", wait)
		}
	}
	return errs
}

// release frees the flow's counts once the server has reported them for
// the last time.
func (s *flowServer) release() {
	if s.counts != nil {
		s.counts.Close()
		s.counts = nil
	}
}

func isDone(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
