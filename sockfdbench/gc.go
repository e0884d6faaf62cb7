//go:build linux

package sockfdbench

import (
	"fmt"
	"time"

	"github.com/kbench/kbench/internal/limits"
	"github.com/kbench/kbench/internal/skip"
	"golang.org/x/sys/unix"
)

// cycler makes AF_UNIX socket cycles that only the kernel's unix garbage
// collector can reclaim: a stream socketpair whose two ends are each sent
// over themselves, so each end is in flight in the other's receive queue,
// and then both are closed.
type cycler struct {
	msg     *rightsMsg
	sampled map[uint64]bool // inodes of sampled cycles' sockets
	cycles  int64
	retries int64 // sends repeated after ETOOMANYREFS
}

// gcSampleEvery is how often, in cycles, the inodes of a cycle's sockets
// are recorded to look for in /proc/net/unix afterwards.
const gcSampleEvery = 64

func newCycler() *cycler {
	m := newRightsMsg(1)
	m.prepareSend()
	return &cycler{msg: m, sampled: map[uint64]bool{}}
}

// cycle makes and drops one cycle. On ETOOMANYREFS (an unprivileged user's
// fds in flight above RLIMIT_NOFILE) it waits for the collector and sends
// again.
func (c *cycler) cycle() error {
	sv, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		return fmt.Errorf("socketpair(AF_UNIX, SOCK_STREAM): %s", skip.Errno(err))
	}
	// A sample joins the set only once its cycle is dropped, so a wait
	// for the collector in the middle of this cycle does not wait for it.
	var inos [2]uint64
	if c.cycles%gcSampleEvery == 0 {
		for i, fd := range sv {
			if inos[i], err = inode(fd); err != nil {
				unix.Close(sv[0])
				unix.Close(sv[1])
				return err
			}
		}
	}
	for _, fd := range sv {
		c.msg.slots()[0] = int32(fd)
		for tries := 0; ; tries++ {
			_, err := c.msg.send(fd)
			if err == nil {
				break
			}
			if err != unix.ETOOMANYREFS || tries == 100 {
				unix.Close(sv[0])
				unix.Close(sv[1])
				return fmt.Errorf("sendmsg of a socket over itself: %s", skip.Errno(err))
			}
			c.retries++
			if err := c.waitCollected(-1, 10*time.Second); err != nil {
				unix.Close(sv[0])
				unix.Close(sv[1])
				return err
			}
		}
	}
	unix.Close(sv[0])
	unix.Close(sv[1])
	for _, ino := range inos {
		if ino != 0 {
			c.sampled[ino] = true
		}
	}
	c.cycles++
	return nil
}

// waitCollected waits until none of the sampled sockets is listed in
// /proc/net/unix and, when fds >= 0, the calling thread's fd table holds
// fds fds again. While waiting it closes a fresh AF_UNIX socket now and
// then, which schedules the collector (unix_release_sock runs unix_gc when
// fds are in flight) in case its last pass ran before the last cycle was
// dropped.
func (c *cycler) waitCollected(fds int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for wait := 50 * time.Microsecond; ; wait = min(2*wait, 10*time.Millisecond) {
		total, present, err := unixSockets(c.sampled)
		if err != nil {
			return err
		}
		open := fds
		if fds >= 0 {
			if open, err = limits.OpenFds(); err != nil {
				return err
			}
		}
		if len(present) == 0 && open == fds {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("unix garbage collector: after %v, %d of %d sampled sockets of %d cycles are still in /proc/net/unix (%d sockets listed); fd table holds %d fds, started with %d",
				timeout, len(present), len(c.sampled), c.cycles, total, open, fds)
		}
		if fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0); err == nil {
			unix.Close(fd)
		}
		time.Sleep(wait)
	}
}
