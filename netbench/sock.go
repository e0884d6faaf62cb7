//go:build linux

package netbench

import (
	"errors"
	"fmt"
	"net/netip"
	"runtime"
	"unsafe"

	"github.com/kbench/kbench/internal/thread"
	"golang.org/x/sys/unix"
)

// The syscalls of one transaction, called directly so that the kernel sees
// what netperf's C makes it see: blocking sockets, send(2) and recv(2)
// (sendto/recvfrom with no address, as glibc issues them), no netpoller,
// SOCK_CLOEXEC (not netperf's) so no socket leaks into a child process.
// Calls that cannot block (socket, getsockopt, setsockopt, bind, close
// without SO_LINGER) are raw (thread.RawSyscall6, glibc's stub alike);
// those that wait for the peer go through thread.Syscall6: raw in a flow's
// own process (thread.Solo), through the runtime in the test binary.

// endpoint is an IP address with a raw sockaddr for it, so that setting
// a port and passing it to bind or connect allocates nothing and goes
// through no runtime wrapper.
type endpoint struct {
	family int
	sa4    unix.RawSockaddrInet4
	sa6    unix.RawSockaddrInet6
}

func newEndpoint(ip netip.Addr) *endpoint {
	e := new(endpoint)
	if ip.Is4() {
		e.family = unix.AF_INET
		e.sa4.Family = unix.AF_INET
		e.sa4.Addr = ip.As4()
	} else {
		e.family = unix.AF_INET6
		e.sa6.Family = unix.AF_INET6
		e.sa6.Addr = ip.As16()
	}
	return e
}

// anyEndpoint is the wildcard address of family, which netperf's client
// binds its data sockets to (0.0.0.0 or ::0).
func anyEndpoint(family int) *endpoint {
	if family == unix.AF_INET {
		return newEndpoint(netip.IPv4Unspecified())
	}
	return newEndpoint(netip.IPv6Unspecified())
}

// at sets the port (network byte order) and returns the sockaddr and its
// length; the sockaddr is reused by the next call.
func (e *endpoint) at(port int) (unsafe.Pointer, uintptr) {
	p := [2]byte{byte(port >> 8), byte(port)}
	if e.family == unix.AF_INET {
		e.sa4.Port = *(*uint16)(unsafe.Pointer(&p))
		return unsafe.Pointer(&e.sa4), unsafe.Sizeof(e.sa4)
	}
	e.sa6.Port = *(*uint16)(unsafe.Pointer(&p))
	return unsafe.Pointer(&e.sa6), unsafe.Sizeof(e.sa6)
}

// bind is bind(2) to e at port; it cannot block.
func (e *endpoint) bind(fd, port int) error {
	sa, n := e.at(port)
	if _, _, errno := thread.RawSyscall6(unix.SYS_BIND, uintptr(fd), uintptr(sa), n, 0, 0, 0); errno != 0 {
		return errno
	}
	return nil
}

// connect is connect(2) to e at port, which waits for the handshake. The
// runtime's signals are installed with SA_RESTART, which restarts it.
func (e *endpoint) connect(fd, port int) error {
	sa, n := e.at(port)
	_, _, errno := thread.Syscall6(unix.SYS_CONNECT, uintptr(fd), uintptr(sa), n, 0, 0, 0)
	runtime.KeepAlive(e)
	if errno != 0 {
		return errno
	}
	return nil
}

// newSocket is netperf's create_data_socket: a blocking TCP socket whose
// buffer sizes are read (set_sock_buffer with no size requested) and that
// gets SO_REUSEADDR.
func newSocket(family int) (int, error) {
	r, _, e := thread.RawSyscall6(unix.SYS_SOCKET, uintptr(family), unix.SOCK_STREAM|unix.SOCK_CLOEXEC, unix.IPPROTO_TCP, 0, 0, 0)
	if e != 0 {
		return -1, fmt.Errorf("socket: %w", e)
	}
	fd := int(r)
	var v int32
	for _, opt := range [...]uintptr{unix.SO_SNDBUF, unix.SO_RCVBUF} {
		n := uint32(unsafe.Sizeof(v))
		if _, _, e := thread.RawSyscall6(unix.SYS_GETSOCKOPT, r, unix.SOL_SOCKET, opt, uintptr(unsafe.Pointer(&v)), uintptr(unsafe.Pointer(&n)), 0); e != 0 {
			rawClose(fd)
			return -1, fmt.Errorf("getsockopt(SOL_SOCKET, %d): %w", opt, e)
		}
	}
	v = 1
	if _, _, e := thread.RawSyscall6(unix.SYS_SETSOCKOPT, r, unix.SOL_SOCKET, unix.SO_REUSEADDR, uintptr(unsafe.Pointer(&v)), unsafe.Sizeof(v), 0); e != 0 {
		rawClose(fd)
		return -1, fmt.Errorf("setsockopt(SO_REUSEADDR): %w", e)
	}
	return fd, nil
}

// rawClose closes a data socket. Without SO_LINGER, close(2) queues the
// FIN and returns; it does not wait for the peer.
func rawClose(fd int) { thread.RawSyscall6(unix.SYS_CLOSE, uintptr(fd), 0, 0, 0, 0, 0) }

// listenSocket opens a server's per-flow listening socket on ip, port
// chosen by the kernel, with netserver's backlog of 5, and returns it with
// its port.
func listenSocket(ip netip.Addr) (fd, port int, err error) {
	e := newEndpoint(ip)
	fd, err = newSocket(e.family)
	if err != nil {
		return -1, 0, err
	}
	if err := e.bind(fd, 0); err != nil {
		unix.Close(fd)
		return -1, 0, fmt.Errorf("bind %v: %w", ip, err)
	}
	if err := unix.Listen(fd, 5); err != nil {
		unix.Close(fd)
		return -1, 0, fmt.Errorf("listen: %w", err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		unix.Close(fd)
		return -1, 0, fmt.Errorf("getsockname: %w", err)
	}
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		port = a.Port
	case *unix.SockaddrInet6:
		port = a.Port
	}
	return fd, port, nil
}

// acceptConn is accept(2) with room for the peer's address, as netserver
// passes &peeraddr_in.
type acceptConn struct {
	raw unix.RawSockaddrAny
	len uint32
}

func (a *acceptConn) accept(lfd int) (int, error) {
	for {
		a.len = unix.SizeofSockaddrAny
		fd, _, errno := thread.Syscall6(unix.SYS_ACCEPT4, uintptr(lfd),
			uintptr(unsafe.Pointer(&a.raw)), uintptr(unsafe.Pointer(&a.len)), unix.SOCK_CLOEXEC, 0, 0)
		runtime.KeepAlive(a)
		if errno == unix.EINTR {
			continue
		}
		if errno != 0 {
			return -1, errno
		}
		return int(fd), nil
	}
}

// sendAll sends buf with send(2) calls until all of it is queued.
func sendAll(fd int, buf []byte) error {
	for len(buf) > 0 {
		n, _, errno := thread.Syscall6(unix.SYS_SENDTO, uintptr(fd),
			uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), 0, 0, 0)
		runtime.KeepAlive(buf)
		if errno == unix.EINTR {
			continue
		}
		if errno != 0 {
			return fmt.Errorf("send: %w", errno)
		}
		buf = buf[n:]
	}
	return nil
}

// recvOnce is one recv(2) call.
func recvOnce(fd int, buf []byte) (int, error) {
	for {
		n, _, errno := thread.Syscall6(unix.SYS_RECVFROM, uintptr(fd),
			uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), 0, 0, 0)
		runtime.KeepAlive(buf)
		if errno == unix.EINTR {
			continue
		}
		if errno != 0 {
			return 0, fmt.Errorf("recv: %w", errno)
		}
		return int(n), nil
	}
}

// recvFull calls recv(2) until buf is full or the peer has closed, as
// netperf's recv_data does with NETPERF_WAITALL; it returns the bytes read.
func recvFull(fd int, buf []byte) (int, error) {
	got := 0
	for got < len(buf) {
		n, err := recvOnce(fd, buf[got:])
		if err != nil {
			return got, err
		}
		if n == 0 {
			break
		}
		got += n
	}
	return got, nil
}

// portRefused reports the errors on which netperf moves to the next local
// port instead of failing.
func portRefused(err error) bool {
	return errors.Is(err, unix.EADDRINUSE) || errors.Is(err, unix.EADDRNOTAVAIL)
}
