//go:build linux

// Package unixbench reproduces the loop of UnixBench's `syscall` test
// (src/syscall.c), the workload of seccomp report 001 and one of the
// probes of the speculation-control report 000.
//
// Mode "m" (mix) calls close(dup(fd)) on a pipe's read end, getpid through
// syscall(2), getuid and umask: five system calls per loop. Mode "g" calls
// getpid alone. Each result is checked, so a loop that stops doing its work
// fails instead of getting faster.
//
// The calls are raw (no entersyscall/exitsyscall, so the Go runtime adds
// no scheduler hooks between them) and as short as Go has them: x/sys's
// RawSyscallNoError, one assembly function around the SYSCALL
// instruction, for the calls that cannot fail or whose failure shows in
// the result (close's is not 0), and package syscall's RawSyscall for dup,
// whose error has to be told from a valid fd on every architecture.
// Against a C loop of syscall(SYS_getpid) built with gcc -O2, interleaved
// in one process, a getpid through RawSyscallNoError costs a few percent
// above C's, where x/sys's RawSyscall, which these loops used before,
// cost about a tenth more and Syscall (the runtime's hooks) over half
// more (results/2026-12-03-harness-floor.md has the ratios and the
// command). x/sys's RawSyscall jumps to
// package syscall's through its ABI0 wrapper, three calls deep before the
// SYSCALL instruction where RawSyscallNoError is one.
//
// UnixBench calls umask(022), which would change the test binary's umask;
// the loop passes the process's current umask instead, so the kernel does
// the same work and nothing changes.
package unixbench

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"testing"

	"github.com/kbench/kbench/internal/limits"
	"golang.org/x/sys/unix"
)

// Work names a loop body.
type Work string

const (
	Mix    Work = "mix"    // close(dup(fd)), getpid, getuid, umask
	Getpid Work = "getpid" // getpid
)

// Loop holds what the loop needs: a pipe fd to dup and the expected
// answers of getpid, getuid and umask.
type Loop struct {
	rfd, wfd int
	pid, uid uintptr
	umask    uintptr
}

// processUmask is read once, at init, when no other goroutine can be
// creating files: umask(2) only reports the mask by replacing it.
var processUmask = sync.OnceValue(func() int {
	old := unix.Umask(0o022)
	unix.Umask(old)
	return old
})

func init() { processUmask() }

// Fds is how many fds a Loop holds at most: its pipe's two ends and, in
// the mix, the copy each loop's dup makes and closes.
const Fds = 3

// New opens the pipe, once it has checked that the calling thread's fd
// table has room for Fds more (limits.Fds); if not, the error is a
// limits.Shortfall.
func New() (*Loop, error) {
	if err := limits.Fds("UnixBench's syscall loop", Fds, "a pipe + the copy each loop's dup makes"); err != nil {
		return nil, err
	}
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return nil, fmt.Errorf("pipe2: %w", err)
	}
	return &Loop{
		rfd:   p[0],
		wfd:   p[1],
		pid:   uintptr(os.Getpid()),
		uid:   uintptr(os.Getuid()),
		umask: uintptr(processUmask()),
	}, nil
}

// CheckFds checks, for a row that has opened more fds since New (its
// instruments', say), that the fd table still has room for the copy each
// loop's dup makes; if not, the error is a limits.Shortfall.
func (l *Loop) CheckFds() error {
	return limits.Fds("UnixBench's syscall loop", 1, "the copy each loop's dup makes; its pipe is open")
}

// Close closes the pipe.
func (l *Loop) Close() error {
	return errors.Join(unix.Close(l.rfd), unix.Close(l.wfd))
}

// Run runs n loops of w and stops at the first call whose result is wrong.
func (l *Loop) Run(w Work, n int) error { return l.run(w, n, nil) }

// For runs loops of w on the calling thread for as long as b.Loop asks
// (one loop per b.Loop iteration, with b.Loop's fast path inline), and
// stops at the first call whose result is wrong. b.Loop may be called
// from a throw-away thread while the row's goroutine waits for it in
// thread.Run, so calls on b stay ordered; the timer runs from the first
// b.Loop call, which resets it, to the last, which stops it, and b.N is
// the op count once For returns nil.
func (l *Loop) For(w Work, b *testing.B) error { return l.run(w, 0, b) }

func (l *Loop) run(w Work, n int, b *testing.B) error {
	switch w {
	case Mix:
		return l.mix(n, b)
	case Getpid:
		return l.getpid(n, b)
	}
	return fmt.Errorf("unixbench: unknown work %q", w)
}

// mix and getpid run loop i while i < n, or while b.Loop() where b is
// not nil (inline, so that b.Loop's fast path costs no call).
func (l *Loop) mix(n int, b *testing.B) error {
	for i := 0; b == nil && i < n || b != nil && b.Loop(); i++ {
		fd, _, e := syscall.RawSyscall(unix.SYS_DUP, uintptr(l.rfd), 0, 0)
		if e != 0 {
			return fmt.Errorf("loop %d: dup(%d): %w", i, l.rfd, e)
		}
		if r, _ := unix.RawSyscallNoError(unix.SYS_CLOSE, fd, 0, 0); r != 0 {
			return fmt.Errorf("loop %d: close(%d) returned %#x, want 0", i, fd, r)
		}
		if pid, _ := unix.RawSyscallNoError(unix.SYS_GETPID, 0, 0, 0); pid != l.pid {
			return fmt.Errorf("loop %d: getpid returned %d, want %d", i, pid, l.pid)
		}
		if uid, _ := unix.RawSyscallNoError(unix.SYS_GETUID, 0, 0, 0); uid != l.uid {
			return fmt.Errorf("loop %d: getuid returned %d, want %d", i, uid, l.uid)
		}
		if old, _ := unix.RawSyscallNoError(unix.SYS_UMASK, l.umask, 0, 0); old != l.umask {
			return fmt.Errorf("loop %d: umask was %#o, want %#o (someone else changed it)", i, old, l.umask)
		}
	}
	return nil
}

func (l *Loop) getpid(n int, b *testing.B) error {
	for i := 0; b == nil && i < n || b != nil && b.Loop(); i++ {
		if pid, _ := unix.RawSyscallNoError(unix.SYS_GETPID, 0, 0, 0); pid != l.pid {
			return fmt.Errorf("loop %d: getpid returned %d, want %d", i, pid, l.pid)
		}
	}
	return nil
}
