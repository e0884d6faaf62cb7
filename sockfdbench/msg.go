//go:build linux

package sockfdbench

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"github.com/kbench/kbench/internal/thread"
	"golang.org/x/sys/unix"
)

// scmMaxFD is the kernel's SCM_MAX_FD: the most fds one SCM_RIGHTS control
// message may carry (include/net/scm.h).
const scmMaxFD = 253

// msgID is the one data byte stress-ng sends with every fd ('M').
const msgID = 'M'

// rightsMsg is a preassembled msghdr for one data byte and an SCM_RIGHTS
// control message with room for n fds, reused for every sendmsg or
// recvmsg so the hot loop allocates nothing.
type rightsMsg struct {
	hdr  unix.Msghdr
	iov  unix.Iovec
	data [1]byte
	ctrl []byte
	n    int
}

func newRightsMsg(n int) *rightsMsg {
	m := &rightsMsg{n: n, ctrl: make([]byte, unix.CmsgSpace(4*n))}
	m.iov.Base = &m.data[0]
	m.iov.SetLen(1)
	m.hdr.Iov = &m.iov
	m.hdr.SetIovlen(1)
	m.hdr.Control = &m.ctrl[0]
	m.hdr.SetControllen(len(m.ctrl))
	return m
}

// cmsg is the control message header at the start of the buffer.
func (m *rightsMsg) cmsg() *unix.Cmsghdr {
	return (*unix.Cmsghdr)(unsafe.Pointer(&m.ctrl[0]))
}

// slots are the n fd slots of the control message's data.
func (m *rightsMsg) slots() []int32 {
	return unsafe.Slice((*int32)(unsafe.Pointer(&m.ctrl[unix.CmsgLen(0)])), m.n)
}

// prepareSend fills in the headers for sending all n slots, as stress-ng's
// stress_socket_fd_send does for its one fd.
func (m *rightsMsg) prepareSend() {
	clear(m.ctrl)
	h := m.cmsg()
	h.Level = unix.SOL_SOCKET
	h.Type = unix.SCM_RIGHTS
	h.SetLen(unix.CmsgLen(4 * m.n))
	m.data[0] = msgID
	m.hdr.SetControllen(len(m.ctrl))
}

// send is sendmsg(fd, m, MSG_NOSIGNAL) on the prepared message, repeated
// if a signal (the Go runtime's SIGURG) interrupts it. It may wait for the
// receiver, so it goes through thread.Syscall6.
func (m *rightsMsg) send(fd int) (int, error) { return m.sendWith(thread.Syscall6, fd) }

// sendBad is send for a message whose fd is invalid: the kernel refuses it
// (EBADF, while copying the fds in) before it could block, so the call
// skips the Go runtime's syscall entry and exit, as other calls that
// cannot block do.
func (m *rightsMsg) sendBad(fd int) (int, error) { return m.sendWith(thread.RawSyscall6, fd) }

func (m *rightsMsg) sendWith(call func(trap, a1, a2, a3, a4, a5, a6 uintptr) (r1, r2 uintptr, err unix.Errno), fd int) (int, error) {
	for {
		r, _, e := call(unix.SYS_SENDMSG, uintptr(fd), uintptr(unsafe.Pointer(&m.hdr)), unix.MSG_NOSIGNAL, 0, 0, 0)
		runtime.KeepAlive(m)
		switch e {
		case 0:
			return int(r), nil
		case unix.EINTR:
			continue
		}
		return -1, e
	}
}

// errEOF is a zero-byte recvmsg: the peer closed the connection.
var errEOF = errors.New("end of stream")

// recv is recvmsg(fd, m, 0) with the control buffer sized for n fds. It
// returns the received fds, which stay in m's buffer until the next call,
// and checks the message is what the sender builds: byte 'M', no
// MSG_CTRUNC, one SCM_RIGHTS header carrying exactly n fds. Whatever fds
// arrived are returned even with an error, so the caller can close them.
func (m *rightsMsg) recv(fd int) ([]int32, error) {
	m.hdr.SetControllen(len(m.ctrl))
	m.hdr.Flags = 0
	m.data[0] = 0
	r, _, e := thread.Syscall6(unix.SYS_RECVMSG, uintptr(fd), uintptr(unsafe.Pointer(&m.hdr)), 0, 0, 0, 0)
	for e == unix.EINTR {
		r, _, e = thread.Syscall6(unix.SYS_RECVMSG, uintptr(fd), uintptr(unsafe.Pointer(&m.hdr)), 0, 0, 0, 0)
	}
	runtime.KeepAlive(m)
	if e != 0 {
		return nil, e
	}
	if r == 0 {
		return nil, errEOF
	}
	var fds []int32
	if int(m.hdr.Controllen) >= unix.CmsgLen(0) {
		h := m.cmsg()
		if h.Level == unix.SOL_SOCKET && h.Type == unix.SCM_RIGHTS {
			got := (int(h.Len) - unix.CmsgLen(0)) / 4
			fds = m.slots()[:min(max(got, 0), m.n)]
		}
	}
	switch {
	case m.data[0] != msgID:
		return fds, fmt.Errorf("recvmsg: data byte %q, want %q", m.data[0], msgID)
	case m.hdr.Flags&unix.MSG_CTRUNC != 0:
		return fds, fmt.Errorf("recvmsg: MSG_CTRUNC set: the kernel dropped fds (got %d of %d); the receiver's fd table is probably full (RLIMIT_NOFILE)", len(fds), m.n)
	case len(fds) != m.n:
		return fds, fmt.Errorf("recvmsg: message carried %d fds, want %d", len(fds), m.n)
	}
	return fds, nil
}
