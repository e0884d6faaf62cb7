//go:build linux

package sockfdbench

import (
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/kbench/kbench/internal/limits"
	"github.com/kbench/kbench/internal/peer"
	"github.com/kbench/kbench/internal/skip"
	"github.com/kbench/kbench/internal/thread"
	"golang.org/x/sys/unix"
)

// pair is one stress-ng sockfd instance: a server process that accepts
// and sends fds, and a client process that connects and receives them,
// for every round of a row.
type pair struct {
	cfg    *Config
	plan   plan
	lfd    int // the listening socket, made before the sides start and kept for the row
	path   string
	budget *peer.Budget
	round  int64 // the round running, from 1

	// done holds the last round the server has finished (or either side
	// failed in), stored before it closes its end, so that EOF,
	// ECONNRESET or a refused connect then mean the end of the round, not
	// an error. ack holds the last round the client has finished, after
	// which it holds no connection (settle). All three live in the
	// mapping the sides share.
	done, ack *atomic.Int64
	failed    *atomic.Bool

	// ready reports the side ready and waits for the round's go: the
	// Link's Ready; link looks for the placement meter (Link.Look): the
	// server at each take of ops, the client at each yield check.
	ready func() error
	link  peer.Link

	before int // the side's fd table after setUp, which each round returns to

	// The server's messages and the path it opens; the client's message
	// and the fds it holds.
	msg, bad *rightsMsg
	cpath    *byte
	held     []int32
}

// yieldCheck is how many fds a thread passes between readings of the
// clock for its thread.Yielder (at least one message): a few hundred
// microseconds' worth, well under thread.YieldEvery.
const yieldCheck = 32

// tickEvery is how many messages of n fds make about yieldCheck fds.
func tickEvery(n int) int64 { return int64(max(1, yieldCheck/n)) }

// fail records that this pair failed, so that the other side treats the
// end of its connection as the end, wakes a server blocked in accept and
// stops the other pairs' servers within a chunk (the round is lost). It
// returns err for the side that failed first and nil for the other.
func (p *pair) fail(err error) error {
	if err == nil {
		return nil
	}
	first := p.failed.CompareAndSwap(false, true)
	p.done.Store(p.round)
	p.budget.Abort()
	p.refuse()
	if !first {
		return nil
	}
	return err
}

// refuse shuts the listening socket down, so connect is refused and a
// blocked accept returns, and closes the connections queued on it, so a
// client that connected just before sees EOF instead of waiting for an
// accept that never comes.
func (p *pair) refuse() {
	unix.Shutdown(p.lfd, unix.SHUT_RDWR)
	for {
		// After shutdown, accept returns queued connections, then EINVAL.
		r, _, e := thread.Syscall6(unix.SYS_ACCEPT4, uintptr(p.lfd), 0, 0, 0, 0, 0)
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return
		}
		unix.Close(int(r))
	}
}

// setUp gives the side's thread its own copy of the fd table, as a
// forked stress-ng process has, counts the fds in it for each round's
// check, and makes the messages the side reuses for the row. No other
// pair's listening socket is there to close: each side is a child
// process that inherits only its own pair's (peer.Side.Fds).
func (p *pair) setUp(server bool) error {
	what := "sockfd client"
	if server {
		what = "sockfd server"
	}
	if err := thread.UnshareFiles(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	before, err := limits.OpenFds()
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	p.before = before
	if !server {
		p.msg = newRightsMsg(p.cfg.FdsPerMsg)
		p.held = make([]int32, 0, p.plan.perConn)
		return nil
	}
	p.msg = newRightsMsg(p.cfg.FdsPerMsg)
	p.msg.prepareSend()
	p.bad = newRightsMsg(1)
	p.bad.prepareSend()
	p.bad.slots()[0] = int32(p.plan.badFD)
	path := p.cfg.path
	if path == "" {
		path = "/dev/zero"
	}
	p.cpath, err = unix.BytePtrFromString(path)
	return err
}

// serve is one round of stress_socket_server: accept a connection, then
// per op open FdsPerMsg fds, send them with one byte 'M' in SCM_RIGHTS,
// close them and send the invalid fd (EBADF); after plan.perConn fds close
// the connection and accept the next. At the round's end it closes the
// connection it serves; the listener stays for the next round. Runs on
// the child's throw-away thread.
func (p *pair) serve() (c Counts, err error) {
	n := p.cfg.FdsPerMsg
	msg, bad, cpath := p.msg, p.bad, p.cpath
	slots := msg.slots()
	perConn := p.plan.perConn / n

	if err := p.ready(); err != nil {
		return c, p.fail(err)
	}

	t := peer.NewTaker(p.budget, budgetChunk).Looking(p.link)
	defer func() { err = errors.Join(err, t.Err()) }()
	every := tickEvery(n)
	sfd, sent := -1, 0
	for {
		if _, ok := t.Next(); !ok {
			break
		}
		if sfd < 0 {
			r, _, e := thread.Syscall6(unix.SYS_ACCEPT4, uintptr(p.lfd), 0, 0, 0, 0, 0)
			for e == unix.EINTR {
				r, _, e = thread.Syscall6(unix.SYS_ACCEPT4, uintptr(p.lfd), 0, 0, 0, 0, 0)
			}
			if e != 0 {
				if p.failed.Load() {
					break
				}
				return c, p.fail(fmt.Errorf("sockfd server: accept: %s", skip.Errno(e)))
			}
			sfd = int(r)
			c.Connections++
		}
		for i := range slots {
			fd, err := p.make(cpath)
			if err != nil {
				err = p.fail(fmt.Errorf("sockfd server: op %d: %v", c.Ops, err))
				p.closeSlots(slots[:i])
				unix.Close(sfd)
				return c, err
			}
			slots[i] = int32(fd)
		}
		err := p.sendRetrying(msg, sfd, &c)
		p.closeSlots(slots)
		if err != nil {
			if p.failed.Load() {
				break
			}
			err = p.fail(fmt.Errorf("sockfd server: sendmsg with %d fds: %v", n, err))
			unix.Close(sfd)
			return c, err
		}
		if _, err := bad.sendBad(sfd); err != unix.EBADF {
			err = p.fail(fmt.Errorf("sockfd server: sendmsg with invalid fd %d returned %v, want EBADF", p.plan.badFD, errOrSuccess(err)))
			unix.Close(sfd)
			return c, err
		}
		c.Ops++
		if c.Ops%every == 0 && !t.Ticked() {
			t.Y.Tick(thread.Clock())
		}
		if sent++; sent == perConn {
			unix.Close(sfd)
			sfd, sent = -1, 0
		}
	}
	// The round's end: the client sees EOF with done set on the
	// connection served, or on one it makes meanwhile (settle).
	p.done.Store(p.round)
	if sfd >= 0 {
		unix.Close(sfd)
	}
	if p.failed.Load() {
		return c, nil
	}
	after, err := limits.OpenFds()
	if err == nil {
		err = checkFdsBack("sockfd server", p.before, after)
	}
	return c, p.fail(err)
}

// settle is the server's part of a round's end, after its Result: until
// the client has finished the round (ack), it accepts and closes any
// connection the client made after the last op, so that the client sees
// EOF with done set instead of waiting in recvmsg for an accept that only
// the next round would do. No connection is then left queued on the
// listener, and the next round's first accept takes the client's first
// connect. It is the end of the round's timed section: the clock stops at
// the last Result, the client's, which follows its ack, so a connection
// the client made after the last op is accepted and closed on the clock,
// as the end of stress-ng's run closes its sockets. The poll wakes as a
// connection comes; its 1 ms timeout only bounds the look at ack.
func (p *pair) settle() error {
	fds := []unix.PollFd{{Fd: int32(p.lfd), Events: unix.POLLIN}}
	for p.ack.Load() < p.round && !p.failed.Load() {
		n, err := unix.Poll(fds, 1)
		if err == unix.EINTR || n == 0 {
			continue
		}
		if err != nil {
			return p.fail(fmt.Errorf("sockfd server: poll on the listener after round %d: %s", p.round, skip.Errno(err)))
		}
		r, _, e := thread.Syscall6(unix.SYS_ACCEPT4, uintptr(p.lfd), 0, 0, 0, 0, 0)
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return p.fail(fmt.Errorf("sockfd server: accept after round %d: %s", p.round, skip.Errno(e)))
		}
		unix.Close(int(r))
	}
	return nil
}

// make opens one fd to pass: /dev/zero O_RDWR as stress-ng does, or an
// AF_UNIX stream socket.
func (p *pair) make(cpath *byte) (int, error) {
	if p.cfg.Kind == KindUnix {
		r, _, e := thread.RawSyscall6(unix.SYS_SOCKET, unix.AF_UNIX, unix.SOCK_STREAM, 0, 0, 0, 0)
		if e != 0 {
			return -1, fmt.Errorf("socket(AF_UNIX, SOCK_STREAM): %s", skip.Errno(e))
		}
		return int(r), nil
	}
	r, _, e := thread.RawSyscall6(unix.SYS_OPENAT, uintptr(atFdcwd), uintptr(unsafe.Pointer(cpath)), unix.O_RDWR, 0, 0, 0)
	if e != 0 {
		return -1, fmt.Errorf("open(%s, O_RDWR): %s", unix.BytePtrToString(cpath), skip.Errno(e))
	}
	return int(r), nil
}

func (p *pair) closeSlots(slots []int32) {
	for _, fd := range slots {
		thread.RawSyscall6(unix.SYS_CLOSE, uintptr(fd), 0, 0, 0, 0, 0)
	}
}

// maxRetries bounds back-to-back ETOOMANYREFS retries of one send.
const maxRetries = 1_000_000

// sendRetrying sends msg, repeating the send while the kernel refuses it
// with ETOOMANYREFS: an unprivileged user may have at most RLIMIT_NOFILE
// fds in flight (too_many_unix_fds), and the client's receiving brings the
// count down. stress-ng ignores the error and counts the op anyway; here
// the op counts only once its fds were really sent.
func (p *pair) sendRetrying(msg *rightsMsg, sfd int, c *Counts) error {
	for tries := 0; ; tries++ {
		_, err := msg.send(sfd)
		if err != unix.ETOOMANYREFS {
			if err != nil {
				return errors.New(skip.Errno(err))
			}
			return nil
		}
		if tries == maxRetries {
			return fmt.Errorf("%s %d times in a row: the user's fds in flight stay above RLIMIT_NOFILE (%d); raise it or run as root", skip.Errno(err), tries+1, p.plan.badFD-1)
		}
		c.Retries++
		thread.RawSyscall6(unix.SYS_SCHED_YIELD, 0, 0, 0, 0, 0, 0)
	}
}

func errOrSuccess(err error) string {
	if err == nil {
		return "success"
	}
	return skip.Errno(err)
}

// receive is one round of stress_socket_client: connect, then receive
// messages, FIONREAD on each received fd (reading a byte if any) and keep
// the fds until plan.perConn are held; then close them all, shut the
// connection down and reconnect. The round ends at EOF once done holds
// it: the fds held are closed, as at a reconnect, and ack says so. Runs
// on the child's throw-away thread.
func (p *pair) receive() (c Counts, err error) {
	msg, held := p.msg, p.held[:0]
	if err := p.ready(); err != nil {
		return c, p.fail(err)
	}

	var y thread.Yielder
	defer func() { err = errors.Join(err, y.Err()) }()
	every := tickEvery(p.cfg.FdsPerMsg)
	end := false
	for !end && p.done.Load() < p.round {
		fd, err := p.connect()
		if err != nil {
			return c, p.fail(err)
		}
		if fd < 0 { // the server has finished
			break
		}
		for len(held) < p.plan.perConn {
			fds, err := msg.recv(fd)
			held = append(held, fds...)
			if err != nil {
				if (err == errEOF || err == unix.ECONNRESET) && p.done.Load() >= p.round {
					end = true
					break
				}
				err = p.fail(fmt.Errorf("sockfd client: message %d: %v", c.MsgsRecv, err))
				p.closeSlots(held)
				unix.Close(fd)
				return c, err
			}
			if c.MsgsRecv%sampleEvery == 0 {
				check := fds[:1]
				if c.MsgsRecv == 0 {
					check = fds
				}
				for _, f := range check {
					if err := checkReceived(int(f), p.cfg.Kind); err != nil {
						err = p.fail(fmt.Errorf("sockfd client: message %d: %v", c.MsgsRecv, err))
						p.closeSlots(held)
						unix.Close(fd)
						return c, err
					}
					c.Sampled++
				}
			}
			c.MsgsRecv++
			if c.MsgsRecv%every == 0 {
				now := thread.Clock()
				y.Tick(now)
				p.link.Look(c.MsgsRecv, now)
			}
			c.FdsRecv += int64(len(fds))
			for _, f := range fds {
				peek(int(f))
			}
		}
		closeHeld(held, &y)
		held = held[:0]
		unix.Shutdown(fd, unix.SHUT_RDWR)
		unix.Close(fd)
	}
	if p.failed.Load() {
		return c, nil
	}
	after, err := limits.OpenFds()
	if err == nil {
		err = checkFdsBack("sockfd client", p.before, after)
	}
	p.ack.Store(p.round)
	return c, p.fail(err)
}

// closeHeld closes the fds a client held for one connection, one close(2)
// each as stress-ng 0.15.06 does, ticking y as it goes: tens of thousands
// of closes take tens of milliseconds, which without a yield looks to the
// Go runtime like a goroutine that will not stop, and its monitor then
// signals the thread (SIGURG) every ~100 us of the batch.
func closeHeld(held []int32, y *thread.Yielder) {
	for i, fd := range held {
		thread.RawSyscall6(unix.SYS_CLOSE, uintptr(fd), 0, 0, 0, 0, 0)
		if i%yieldCheck == yieldCheck-1 {
			y.Tick(thread.Clock())
		}
	}
}

// peek is stress-ng's use of a received fd: FIONREAD, and read one byte if
// the fd has any. /dev/zero answers FIONREAD with ENOTTY; an unconnected
// AF_UNIX socket with 0 bytes.
func peek(fd int) {
	var n int32
	// FIONREAD is TIOCINQ on Linux.
	_, _, e := thread.RawSyscall6(unix.SYS_IOCTL, uintptr(fd), unix.TIOCINQ, uintptr(unsafe.Pointer(&n)), 0, 0, 0)
	if e == 0 && n >= 1 {
		var b [1]byte
		thread.RawSyscall6(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), 1, 0, 0, 0)
	}
}

// connect is the client's socket, SO_REUSEADDR and connect, retried 100
// times 10ms apart as stress-ng does while the server is not listening. It
// returns -1 with no error when the server has finished. connect can wait
// for the server's backlog, so it goes through thread.Syscall6.
func (p *pair) connect() (int, error) {
	var sa unix.RawSockaddrUnix
	if len(p.path) >= len(sa.Path) {
		return -1, fmt.Errorf("sockfd client: socket path %q is longer than %d bytes", p.path, len(sa.Path)-1)
	}
	sa.Family = unix.AF_UNIX
	for i := range len(p.path) {
		sa.Path[i] = int8(p.path[i])
	}
	salen := unsafe.Offsetof(sa.Path) + uintptr(len(p.path)) + 1
	for retries := 0; ; retries++ {
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		if err != nil {
			return -1, fmt.Errorf("sockfd client: socket(AF_UNIX, SOCK_STREAM): %s", skip.Errno(err))
		}
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); err != nil {
			unix.Close(fd)
			return -1, fmt.Errorf("sockfd client: setsockopt(SO_REUSEADDR): %s", skip.Errno(err))
		}
		if _, _, e := thread.Syscall6(unix.SYS_CONNECT, uintptr(fd), uintptr(unsafe.Pointer(&sa)), salen, 0, 0, 0); e != 0 {
			err = e
		} else {
			return fd, nil
		}
		unix.Close(fd)
		if p.done.Load() >= p.round {
			return -1, nil
		}
		if err == unix.EINTR {
			continue
		}
		if retries == 100 || !slices.Contains([]error{unix.ECONNREFUSED, unix.ENOENT, unix.EAGAIN}, err) {
			return -1, fmt.Errorf("sockfd client: connect(%s): %s after %d retries", p.path, skip.Errno(err), retries)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// atFdcwd is AT_FDCWD as a variable, so it converts to uintptr.
var atFdcwd = unix.AT_FDCWD
