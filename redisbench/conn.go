//go:build linux

package redisbench

import (
	"context"
	"io"
	"net"
	"os"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// blockingConn is a TCP connection on a blocking socket, read and written
// with plain read(2) and write(2) on the calling thread. go-redis gets it
// through Options.Dialer instead of a net.TCPConn, whose reads go through
// Go's netpoller: a read that finds no reply yet parks the goroutine, and
// the reply then wakes it through epoll_pwait and the scheduler, with
// futex and nanosleep calls between threads on every batch. A blocking
// read waits in the socket's own wait queue, as redis-benchmark's event
// loop waits in epoll_wait, and the scheduler is not on the round trip.
//
// Timeouts are SO_RCVTIMEO and SO_SNDTIMEO, set once at dial to ioTimeout
// so that a server that stops answering fails the run instead of hanging
// it (go-redis sets no deadlines of its own: NewClient passes -2). A
// deadline set through SetDeadline becomes the time left until it; the
// zero deadline restores ioTimeout. A read or write that times out
// returns an error whose Timeout() is true.
//
// A blockingConn has one owner, as go-redis's connections do: Close may
// run while a Read is blocked (it shuts the socket down to wake it), but
// a Read or Write that has loaded the fd and not yet entered its syscall
// when Close runs could use the number after it is reused.
type blockingConn struct {
	fd     atomic.Int32 // -1 once closed
	local  net.Addr
	remote net.Addr
}

// ioTimeout bounds each read(2) and write(2) call on a blockingConn (a
// Write of many calls may take longer) and, without a context deadline,
// its connect(2).
const ioTimeout = 30 * time.Second

// dialBlocking connects to addr (host:port) with a blocking TCP socket
// with TCP_NODELAY, as hiredis does for redis-benchmark. A host name is
// looked up and its addresses tried in turn, as net.Dial does.
func dialBlocking(ctx context.Context, network, addr string) (net.Conn, error) {
	switch network {
	case "tcp", "tcp4", "tcp6":
	default:
		return nil, &net.OpError{Op: "dial", Net: network, Err: net.UnknownNetworkError(network)}
	}
	host, service, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, &net.OpError{Op: "dial", Net: network, Err: err}
	}
	port, err := net.DefaultResolver.LookupPort(ctx, network, service)
	if err != nil {
		return nil, &net.OpError{Op: "dial", Net: network, Err: err}
	}
	var ips []net.IP
	if ip := net.ParseIP(host); ip != nil {
		ips = []net.IP{ip}
	} else {
		found, err := net.DefaultResolver.LookupIPAddr(ctx, host)
		if err != nil {
			return nil, &net.OpError{Op: "dial", Net: network, Err: err}
		}
		for _, a := range found {
			ips = append(ips, a.IP)
		}
	}
	var first error
	for _, ip := range ips {
		if (network == "tcp4" && ip.To4() == nil) || (network == "tcp6" && ip.To4() != nil) {
			continue
		}
		c, err := dialOne(ctx, network, &net.TCPAddr{IP: ip, Port: port})
		if err == nil {
			return c, nil
		}
		if first == nil {
			first = err
		}
	}
	if first == nil {
		first = &net.OpError{Op: "dial", Net: network, Err: &net.AddrError{Err: "no suitable address", Addr: host}}
	}
	return nil, first
}

// dialOne connects a blocking socket to raddr.
func dialOne(ctx context.Context, network string, raddr *net.TCPAddr) (net.Conn, error) {
	domain, sa := unix.AF_INET, unix.Sockaddr(nil)
	if ip4 := raddr.IP.To4(); ip4 != nil {
		sa4 := &unix.SockaddrInet4{Port: raddr.Port}
		copy(sa4.Addr[:], ip4)
		sa = sa4
	} else {
		domain = unix.AF_INET6
		sa6 := &unix.SockaddrInet6{Port: raddr.Port}
		copy(sa6.Addr[:], raddr.IP.To16())
		sa = sa6
	}
	fd, err := unix.Socket(domain, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, &net.OpError{Op: "dial", Net: network, Addr: raddr, Err: os.NewSyscallError("socket", err)}
	}
	fail := func(err error) (net.Conn, error) {
		unix.Close(fd)
		return nil, &net.OpError{Op: "dial", Net: network, Addr: raddr, Err: err}
	}
	if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1); err != nil {
		return fail(os.NewSyscallError("setsockopt TCP_NODELAY", err))
	}
	// connect(2) on a blocking socket waits as long as the kernel's SYN
	// retries; SO_SNDTIMEO, which Linux applies to connect, bounds the
	// wait by the context's deadline (each call's: a signal restarts it
	// with the whole time), or by ioTimeout.
	deadline, _ := ctx.Deadline()
	if err := setTimeout(fd, unix.SO_SNDTIMEO, deadline); err != nil {
		return fail(os.NewSyscallError("setsockopt SO_SNDTIMEO", err))
	}
	for {
		err = unix.Connect(fd, sa)
		switch err {
		case unix.EINTR, unix.EALREADY:
			// A signal ended the wait; connecting again waits on.
			if cerr := ctx.Err(); cerr != nil {
				return fail(cerr)
			}
			continue
		case unix.EISCONN: // connected while the signal was handled
			err = nil
		case unix.EINPROGRESS: // SO_SNDTIMEO ran out
			return fail(timeoutError{"connect"})
		}
		break
	}
	if err != nil {
		return fail(os.NewSyscallError("connect", err))
	}
	for _, opt := range []int{unix.SO_SNDTIMEO, unix.SO_RCVTIMEO} {
		if err := setTimeout(fd, opt, time.Time{}); err != nil {
			return fail(os.NewSyscallError("setsockopt", err))
		}
	}
	c := &blockingConn{remote: raddr}
	c.fd.Store(int32(fd))
	if lsa, err := unix.Getsockname(fd); err == nil {
		c.local = sockaddrTCP(lsa)
	}
	return c, nil
}

func sockaddrTCP(sa unix.Sockaddr) net.Addr {
	switch sa := sa.(type) {
	case *unix.SockaddrInet4:
		return &net.TCPAddr{IP: net.IP(sa.Addr[:]).To16(), Port: sa.Port}
	case *unix.SockaddrInet6:
		return &net.TCPAddr{IP: net.IP(sa.Addr[:]), Port: sa.Port}
	}
	return nil
}

// setTimeout sets SO_RCVTIMEO or SO_SNDTIMEO to the time left until t, or
// to ioTimeout for the zero t. A t already past sets the shortest timeout.
func setTimeout(fd, opt int, t time.Time) error {
	d := ioTimeout
	if !t.IsZero() {
		d = max(time.Until(t), time.Microsecond)
	}
	tv := unix.NsecToTimeval(d.Nanoseconds())
	return unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, opt, &tv)
}

// timeoutError is what a read or write past its deadline returns.
type timeoutError struct{ op string }

func (e timeoutError) Error() string   { return e.op + ": i/o timeout" }
func (e timeoutError) Timeout() bool   { return true }
func (e timeoutError) Temporary() bool { return true }
func (e timeoutError) Is(target error) bool {
	return target == os.ErrDeadlineExceeded
}

func (c *blockingConn) Read(b []byte) (int, error) {
	fd := int(c.fd.Load())
	if fd < 0 {
		return 0, c.opError("read", net.ErrClosed)
	}
	if len(b) == 0 {
		return 0, nil
	}
	for {
		n, err := unix.Read(fd, b)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return 0, timeoutError{"read"}
		case err != nil:
			return 0, c.opError("read", err)
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

func (c *blockingConn) Write(b []byte) (int, error) {
	fd := int(c.fd.Load())
	if fd < 0 {
		return 0, c.opError("write", net.ErrClosed)
	}
	done := 0
	for done < len(b) {
		n, err := unix.Write(fd, b[done:])
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return done, timeoutError{"write"}
		case err != nil:
			return done, c.opError("write", err)
		}
		done += n
	}
	return done, nil
}

func (c *blockingConn) opError(op string, err error) error {
	if errno, ok := err.(unix.Errno); ok {
		err = os.NewSyscallError(op, errno)
	}
	return &net.OpError{Op: op, Net: "tcp", Source: c.local, Addr: c.remote, Err: err}
}

// Close shuts the socket down before closing it, so that a read blocked
// in another goroutine returns (closing alone does not wake it).
func (c *blockingConn) Close() error {
	fd := int(c.fd.Swap(-1))
	if fd < 0 {
		return c.opError("close", net.ErrClosed)
	}
	unix.Shutdown(fd, unix.SHUT_RDWR)
	if err := unix.Close(fd); err != nil {
		return c.opError("close", err)
	}
	return nil
}

func (c *blockingConn) LocalAddr() net.Addr  { return c.local }
func (c *blockingConn) RemoteAddr() net.Addr { return c.remote }

func (c *blockingConn) SetDeadline(t time.Time) error {
	if err := c.SetReadDeadline(t); err != nil {
		return err
	}
	return c.SetWriteDeadline(t)
}

func (c *blockingConn) SetReadDeadline(t time.Time) error {
	return c.setDeadline(unix.SO_RCVTIMEO, t)
}

func (c *blockingConn) SetWriteDeadline(t time.Time) error {
	return c.setDeadline(unix.SO_SNDTIMEO, t)
}

func (c *blockingConn) setDeadline(opt int, t time.Time) error {
	fd := int(c.fd.Load())
	if fd < 0 {
		return c.opError("set deadline", net.ErrClosed)
	}
	if err := setTimeout(fd, opt, t); err != nil {
		return c.opError("set deadline", err)
	}
	return nil
}
