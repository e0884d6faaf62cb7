//go:build linux

package sockfdbench

import (
	"fmt"

	"github.com/kbench/kbench/internal/procfs"
	"github.com/kbench/kbench/internal/skip"
	"golang.org/x/sys/unix"
)

// Kind is what the server passes: /dev/zero files, as stress-ng does, or
// AF_UNIX sockets, which the kernel also adds to the garbage collector's
// graph as vertices and edges.
type Kind string

const (
	KindFile Kind = "file"
	KindUnix Kind = "unix"
)

// zeroRdev is /dev/zero's device number, char 1:5 (Documentation/admin-guide/devices.txt).
var zeroRdev = unix.Mkdev(1, 5)

// checkReceived proves a received fd is what the server sends: for
// KindFile a character device 1:5 (/dev/zero), for KindUnix an AF_UNIX
// socket.
func checkReceived(fd int, kind Kind) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("fstat on received fd %d: %s", fd, skip.Errno(err))
	}
	switch kind {
	case KindFile:
		if st.Mode&unix.S_IFMT != unix.S_IFCHR || st.Rdev != zeroRdev {
			return fmt.Errorf("received fd %d is mode %#o device %d:%d, want /dev/zero (char 1:5)",
				fd, st.Mode&unix.S_IFMT, unix.Major(st.Rdev), unix.Minor(st.Rdev))
		}
	case KindUnix:
		if st.Mode&unix.S_IFMT != unix.S_IFSOCK {
			return fmt.Errorf("received fd %d is mode %#o, want a socket", fd, st.Mode&unix.S_IFMT)
		}
		dom, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_DOMAIN)
		if err != nil {
			return fmt.Errorf("getsockopt(SO_DOMAIN) on received fd %d: %s", fd, skip.Errno(err))
		}
		if dom != unix.AF_UNIX {
			return fmt.Errorf("received fd %d is a socket of domain %d, want AF_UNIX (%d)", fd, dom, unix.AF_UNIX)
		}
	default:
		return fmt.Errorf("unknown kind %q", kind)
	}
	return nil
}

// Counts is what one run did, summed over its pairs. The server counts
// its ops and the clients count what the kernel delivered to them, so the
// two sides check each other. (An op's sendmsg with fds and its EBADF
// send are checked as they happen: the op fails there.)
type Counts struct {
	Ops         int64 // server ops: fds opened, sent, closed, and an EBADF send
	MsgsRecv    int64 // recvmsg calls that returned a message with fds
	FdsRecv     int64 // fds those messages carried
	Sampled     int64 // received fds checked with fstat
	Connections int64 // connections the server accepted
	Retries     int64 // sendmsg calls repeated after ETOOMANYREFS (too many fds in flight for an unprivileged user)
}

// check proves the counts add up: the servers did the ops asked for, and
// the clients received one message of fdsPerMsg fds for each.
func (c Counts) check(want int64, fdsPerMsg int) error {
	switch {
	case c.Ops != want:
		return fmt.Errorf("servers did %d ops, want %d", c.Ops, want)
	case c.MsgsRecv != c.Ops || c.FdsRecv != c.Ops*int64(fdsPerMsg):
		return fmt.Errorf("clients received %d messages with %d fds, servers sent %d with %d", c.MsgsRecv, c.FdsRecv, c.Ops, c.Ops*int64(fdsPerMsg))
	case c.Ops > 0 && c.Sampled == 0:
		return fmt.Errorf("no received fd was checked with fstat in %d ops", c.Ops)
	}
	return nil
}

func (c *Counts) add(o Counts) {
	c.Ops += o.Ops
	c.MsgsRecv += o.MsgsRecv
	c.FdsRecv += o.FdsRecv
	c.Sampled += o.Sampled
	c.Connections += o.Connections
	c.Retries += o.Retries
}

// checkFdsBack fails when an fd table did not return to its starting size.
func checkFdsBack(what string, before, after int) error {
	if before != after {
		return fmt.Errorf("%s: fd table held %d fds before and %d after: %+d leaked", what, before, after, after-before)
	}
	return nil
}

// unixSockets reads /proc/net/unix: the number of sockets listed (every
// AF_UNIX socket of this network namespace, whoever owns it) and which of
// the inodes in want are among them.
func unixSockets(want map[uint64]bool) (total int, present []uint64, err error) {
	inodes, err := procfs.Host.UnixSockets()
	if err != nil {
		return 0, nil, err
	}
	for _, ino := range inodes {
		if want[ino] {
			present = append(present, ino)
		}
	}
	return len(inodes), present, nil
}

// inode returns the inode number /proc/net/unix shows for socket fd.
func inode(fd int) (uint64, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return 0, fmt.Errorf("fstat(%d): %s", fd, skip.Errno(err))
	}
	return st.Ino, nil
}
