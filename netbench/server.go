//go:build linux

package netbench

import (
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kbench/kbench/internal/peer"
	"github.com/kbench/kbench/internal/thread"
	"golang.org/x/sys/unix"
)

// flowServer is netserver's child for one flow, as the server holds it:
// its own listening socket (backlog 5) and its side (internal/peer), a
// process of its own (mm=separate, as netserver forks one per test) or a
// throw-away thread of the server's (mm=shared, and always when tests
// set hooks), which runs flowLoop for one round, from OPEN to STOP.
type flowServer struct {
	lfd    int
	port   int
	thread bool // the side is a thread of this process

	// The flow's counts so far, which the control connection reads
	// while the flow runs (COUNTS), and the stop flag, in memory this
	// process shares with the flow's side.
	counts  *peer.Mem
	txns    *atomic.Int64 // responses sent
	badReqs *atomic.Int64 // requests with a wrong byte
	stop    *atomic.Bool

	run  *peer.Group
	hook int   // the hooks' registration, 0 for none
	err  error // the side's result, once done is closed
	done chan struct{}
}

// flowLoop is a flow server's side: its loop's state, in the flow's
// process or thread.
type flowLoop struct {
	kind    Kind
	pat     *patterns
	lfd     int
	txns    *atomic.Int64
	badReqs *atomic.Int64
	stop    *atomic.Bool
	link    peer.Link
	served  int64 // transactions answered, for hooks
	counted int64 // transactions counted; published in txns
	hooks   *serverHooks
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

// hooksByID hands a flow thread its hooks, which its arguments can only
// name: they are functions, so flows with hooks are threads.
var (
	hooksMu   sync.Mutex
	hooksByID = map[int]*serverHooks{}
	hooksNext int
)

// serverArgs and serverCounts are a flow server side's arguments and
// counts. Sweep: the side is a thread, whose copy of the process's fd
// table holds other flows' sockets (ownFiles).
type (
	serverArgs struct {
		Kind, Req, Rsp int
		Sweep          bool
		Hooks          int
	}
	serverCounts struct{ Txns, BadReqs int64 }
)

// countsSize is a flow's counts and stop flag in the memory it shares
// with the server: responses sent, requests with a wrong byte, stop.
const countsSize = 24

// startFlowServer opens the listening socket on ip and starts the flow o
// asks for: its side a process (separate, without hooks) or a thread,
// pinned where o says and watched by o's meter, if any (the second end
// of a pair whose client is an in-process row's). It returns once the
// side has its fd
// table, which is made before the flow is the client's, so that a file
// the client side opens later (the netstat counters it reads between
// rounds) is never in a thread's copy.
func startFlowServer(ip netip.Addr, o flowOpen, hooks *serverHooks) (*flowServer, error) {
	kind, req, rsp, separate := o.kind, o.req, o.rsp, o.separate
	lfd, port, err := listenSocket(ip)
	if err != nil {
		return nil, err
	}
	m, err := peer.NewMem("kbench-netbench-server", countsSize)
	if err != nil {
		unix.Close(lfd)
		return nil, err
	}
	s := &flowServer{lfd: lfd, port: port, thread: !separate || hooks != nil, counts: m,
		txns: m.Int64(0), badReqs: m.Int64(8), stop: m.Bool(16), done: make(chan struct{})}
	if hooks != nil {
		hooksMu.Lock()
		hooksNext++
		s.hook = hooksNext
		hooksByID[s.hook] = hooks
		hooksMu.Unlock()
	}
	side := peer.Side{Role: serverRole, Args: serverArgs{int(kind), req, rsp, s.thread, s.hook}, Fds: []int{lfd, m.Fd()},
		Pin: o.pin, CPU: o.cpu, Thread: s.thread, Watch: o.watch}
	if s.run, err = peer.Start([]peer.Side{side}); err == nil {
		if err = s.run.Begin(nil, nil); err != nil {
			err = errors.Join(err, s.run.Close())
		}
	}
	if err != nil {
		s.unhook()
		m.Close()
		unix.Close(lfd)
		return nil, err
	}
	go func() {
		var c serverCounts
		err := s.run.End(nil, func(int) any { return &c })
		if err == nil {
			// The same counts the side kept in the shared memory; a
			// side that failed keeps what it had counted there.
			s.txns.Store(c.Txns)
			s.badReqs.Store(c.BadReqs)
		}
		s.err = errors.Join(err, s.run.Close())
		s.unhook()
		if s.err != nil {
			// Refuse the flow's client: queued and later connections
			// would otherwise wait for an accept that never comes.
			unix.Shutdown(s.lfd, unix.SHUT_RDWR)
		}
		close(s.done)
	}()
	return s, nil
}

func (s *flowServer) unhook() {
	hooksMu.Lock()
	delete(hooksByID, s.hook)
	hooksMu.Unlock()
}

// serverRole is a flow server side: file 0 is its listening socket, file
// 1 the memory its counts and stop flag are in. Its one round lasts from
// OPEN to STOP.
var serverRole = peer.Register("netbench-server", func(l peer.Link) error {
	var a serverArgs
	if err := l.Args(&a); err != nil {
		return err
	}
	m, err := peer.MapMem(l.File(1), countsSize)
	if err != nil {
		return err
	}
	defer m.Close()
	s := &flowLoop{kind: Kind(a.Kind), pat: newPatterns(a.Req, a.Rsp), lfd: l.File(0),
		txns: m.Int64(0), badReqs: m.Int64(8), stop: m.Bool(16), link: l}
	if a.Hooks != 0 {
		hooksMu.Lock()
		s.hooks = hooksByID[a.Hooks]
		hooksMu.Unlock()
	}
	if ok, err := l.Next(nil); !ok || err != nil {
		return err
	}
	if err := ownFiles(s.lfd, a.Sweep); err != nil {
		return err
	}
	if err := l.Ready(nil); err != nil {
		return err
	}
	err = s.loop()
	if rerr := l.Result(serverCounts{s.txns.Load(), s.badReqs.Load()}); err == nil {
		err = rerr
	}
	if err != nil {
		return err
	}
	if more, err := l.Next(nil); more || err != nil {
		return errors.Join(err, errors.New("netbench server flow: a second round"))
	}
	return nil
})

// yieldCheck is how many transactions a flow serves between its looks
// for the placement meter and RR clock readings for its Yielder; tickCRR
// how many CRR ones between those readings, a few ms where one takes 100 us.
const (
	yieldCheck = 16
	tickCRR    = 4
)

// loop serves the flow until it is told to stop: the stop flag, set
// before the server shuts the listening socket down, after which accept
// fails with EINVAL.
func (s *flowLoop) loop() (err error) {
	if h := s.hooks; h != nil && h.start != nil {
		if err := h.start(); err != nil {
			return err
		}
	}
	var ac acceptConn
	var y thread.Yielder
	defer func() { err = errors.Join(err, y.Err()) }()
	req := make([]byte, len(s.pat.req[0]))
	for conns := 0; ; conns++ {
		if conns%tickCRR == 0 {
			now := thread.Clock()
			y.Tick(now)
			if conns%yieldCheck == 0 {
				s.link.Look(s.served, now)
			}
		}
		fd, err := ac.accept(s.lfd)
		if err != nil {
			if s.stop.Load() {
				return nil
			}
			if err == unix.ECONNABORTED {
				continue
			}
			return fmt.Errorf("accept: %w", err)
		}
		if s.stop.Load() {
			rawClose(fd)
			return nil
		}
		if s.kind == CRR {
			_, err = s.serve(fd, req)
		} else {
			for n := 0; ; n++ {
				if n%yieldCheck == 0 {
					now := thread.Clock()
					y.Tick(now)
					s.link.Look(s.served, now)
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
			if s.stop.Load() {
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
func (s *flowLoop) serve(fd int, req []byte) (bool, error) {
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
		s.stop.Store(true)
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
		if !s.thread && !isDone(s.done) {
			// A process can be ended: kill it, and its listening
			// socket and connections close with it.
			s.run.Kill()
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
