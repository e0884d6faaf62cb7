//go:build linux

package netbench

import (
	"fmt"
	"net/netip"

	"golang.org/x/sys/unix"
)

// clientFlow is one netperf client: one flow, one OS thread, its own port
// walk.
type clientFlow struct {
	kind   Kind
	pat    *patterns
	server *endpoint // the flow's server address
	port   int       // the flow's server data port
	local  *endpoint // wildcard address the CRR client binds
	walk   *portWalker
	rsp    []byte
	eof    [1]byte
	seq    int
	fd     int // the RR connection

	txns  int64 // transactions completed and checked
	skips int64 // local ports refused (EADDRINUSE, EADDRNOTAVAIL)
}

func newClientFlow(kind Kind, pat *patterns, server netip.Addr, port int, walk *portWalker) *clientFlow {
	e := newEndpoint(server)
	return &clientFlow{
		kind: kind, pat: pat, server: e, port: port,
		local: anyEndpoint(e.family), walk: walk,
		rsp: make([]byte, len(pat.rsp[0])), fd: -1,
	}
}

// connectFrom is netperf's connection set-up for TCP_CRR: a new socket with
// SO_REUSEADDR, bound to the walk's next port, connected; on EADDRINUSE or
// EADDRNOTAVAIL from bind or connect it closes the socket and takes the
// next port.
func (f *clientFlow) connectFrom() (int, error) {
	for refused := 0; ; {
		port := f.walk.Next()
		fd, err := newSocket(f.local.family)
		if err != nil {
			return -1, err
		}
		op := "bind"
		err = f.local.bind(fd, port)
		if err == nil {
			op = "connect from"
			err = f.server.connect(fd, f.port)
			if err == nil {
				return fd, nil
			}
		}
		rawClose(fd)
		// The errno decides before any error is formatted: refused
		// ports are walked past inside the timed loop.
		if !portRefused(err) {
			return -1, fmt.Errorf("%s port %d: %w", op, port, err)
		}
		f.skips++
		if refused++; refused >= f.walk.Span() {
			return -1, fmt.Errorf("every local port %d-%d refused (last: %s port %d: %v)", f.walk.min, f.walk.max-1, op, port, err)
		}
	}
}

// crr is one TCP_CRR transaction: connect, send the request, receive the
// response, read to EOF (the server closes first), close.
func (f *clientFlow) crr() error {
	k := f.seq & 255
	f.seq++
	fd, err := f.connectFrom()
	if err != nil {
		return err
	}
	err = f.exchange(fd, k)
	if err == nil {
		var n int
		n, err = recvOnce(fd, f.eof[:])
		if err == nil && n != 0 {
			err = fmt.Errorf("transaction tag %d: %d more byte(s) after the response, want EOF", k, n)
		}
	}
	rawClose(fd)
	if err == nil {
		f.txns++
	}
	return err
}

// exchange sends request k and receives and checks its response.
func (f *clientFlow) exchange(fd, k int) error {
	if err := sendAll(fd, f.pat.req[k]); err != nil {
		return err
	}
	n, err := recvFull(fd, f.rsp)
	if err != nil {
		return err
	}
	if n < len(f.rsp) {
		return fmt.Errorf("transaction tag %d: server closed after %d of %d response bytes", k, n, len(f.rsp))
	}
	return f.pat.checkResponse(k, f.rsp)
}

// rrOpen sets up the TCP_RR connection as netperf does: SO_REUSEADDR, no
// explicit bind, connect.
func (f *clientFlow) rrOpen() error {
	fd, err := newSocket(f.server.family)
	if err != nil {
		return err
	}
	if err := f.server.connect(fd, f.port); err != nil {
		unix.Close(fd)
		return fmt.Errorf("connect: %w", err)
	}
	f.fd = fd
	return nil
}

// rr is one TCP_RR transaction on the open connection.
func (f *clientFlow) rr() error {
	k := f.seq & 255
	f.seq++
	if err := f.exchange(f.fd, k); err != nil {
		return err
	}
	f.txns++
	return nil
}

// rrClose ends the RR connection as netperf's disconnect_data_socket does:
// shutdown(SHUT_WR), read EOF, close.
func (f *clientFlow) rrClose() error {
	if f.fd < 0 {
		return nil
	}
	defer func() { unix.Close(f.fd); f.fd = -1 }()
	if err := unix.Shutdown(f.fd, unix.SHUT_WR); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	n, err := recvOnce(f.fd, f.eof[:])
	if err == nil && n != 0 {
		err = fmt.Errorf("%d unexpected byte(s) at the end of the RR connection", n)
	}
	return err
}
