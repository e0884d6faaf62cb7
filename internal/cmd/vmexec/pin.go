//go:build linux

package main

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/kbench/kbench/internal/cpus"
	"github.com/kbench/kbench/internal/fingerprint"
	"golang.org/x/sys/unix"
)

// cpuRE finds each vCPU's host thread in QEMU's `info cpus`.
var cpuRE = regexp.MustCompile(`CPU #(\d+):.*thread_id=(\d+)`)

// pin binds vCPU i's thread to the i-th CPU vmexec may run on (ktstr's
// performance mode), when there are at least as many CPUs as vCPUs, and
// says what it did for the fingerprint.
func (b *boot) pin() string {
	smp := b.h.cfg.smp
	if b.h.cfg.pin == "off" {
		return "not pinned (-pin off)"
	}
	allowed, err := cpus.Usable()
	if err != nil {
		return "not pinned (" + err.Error() + ")"
	}
	if len(allowed) < smp {
		return fmt.Sprintf("not pinned (%d vCPUs, %d host CPUs allowed: %s)", smp, len(allowed), fingerprint.FormatCPUList(allowed))
	}
	out, err := b.monitor("info cpus")
	if err != nil {
		return "not pinned (QEMU's info cpus: " + err.Error() + ")"
	}
	m := cpuRE.FindAllStringSubmatch(out, -1)
	if len(m) != smp {
		return fmt.Sprintf("not pinned (QEMU's info cpus listed %d vCPU threads for %d vCPUs)", len(m), smp)
	}
	var parts []string
	for _, c := range m {
		i, _ := strconv.Atoi(c[1])
		tid, _ := strconv.Atoi(c[2])
		if i >= smp {
			return "not pinned (QEMU's info cpus lists vCPU " + c[1] + ")"
		}
		var one unix.CPUSet
		one.Set(allowed[i])
		if err := unix.SchedSetaffinity(tid, &one); err != nil {
			return fmt.Sprintf("not pinned (sched_setaffinity of vCPU %d's thread %d: %v)", i, tid, err)
		}
		parts = append(parts, fmt.Sprintf("vCPU%d->CPU%d", i, allowed[i]))
	}
	return strings.Join(parts, " ") + " (QEMU's other threads unpinned)"
}

// monitor runs one command of QEMU's human monitor, on the socket pair
// whose other end is QEMU's fd 5, and returns what QEMU wrote up to its
// next "(qemu) " prompt (the monitor's greeting before the first
// command's answer, and the command's echo).
func (b *boot) monitor(cmd string) (string, error) {
	b.mon.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := b.mon.Write([]byte(cmd + "\n")); err != nil {
		return "", err
	}
	prompts := 1
	if !b.greeted { // the greeting ends with a prompt too
		prompts, b.greeted = 2, true
	}
	var out []byte
	buf := make([]byte, 64<<10)
	for bytes.Count(out, []byte("(qemu) ")) < prompts {
		n, err := b.mon.Read(buf)
		if err != nil {
			return "", err
		}
		out = append(out, buf[:n]...)
	}
	return string(out), nil
}

// socketPair is a connected pair of Unix stream sockets: vmexec's end,
// with deadlines, and QEMU's, to pass as a file.
func socketPair() (net.Conn, *os.File, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	mine, qemu := os.NewFile(uintptr(fds[0]), "socket"), os.NewFile(uintptr(fds[1]), "socket")
	c, err := net.FileConn(mine) // a dup
	if mine.Close(); err != nil {
		qemu.Close()
		return nil, nil, err
	}
	return c, qemu, nil
}
