//go:build linux

package thread

import (
	"runtime"
	"runtime/debug"

	"golang.org/x/sys/unix"
)

// A solo process exists for one benchmark loop, as each process of a C
// reference tool does (netperf, netserver, stress-ng's forked sides,
// UnixBench's context1): internal/child makes every child process solo
// before its role runs.
//
// In a solo process the Go runtime has one P (GOMAXPROCS=1), the loop
// still runs on its locked throw-away thread (Run), with its private fd
// table and its CPU pin, and the calls that wait for a peer (Syscall6)
// are raw: the runtime is not told that the thread blocks, so its P stays
// with the loop. What that saves (results/2026-11-30-solo-processes.md):
//   - No entry and exit bookkeeping around each call (entersyscall,
//     exitsyscall), which netperf's glibc wrappers do not have either.
//   - No P taken away by the runtime's monitor (sysmon), which retakes a P
//     whose thread sits in a system call once no other P is idle; with one
//     P and runtime-aware calls that happens on every call longer than
//     sysmon's tick (20 us while it finds work, up to 10 ms when idle),
//     and a P that is taken starts a spinning thread.
//   - No handoff when the Yielder yields: it releases the goroutine's lock
//     for the yield, and the thread that holds the only P picks the
//     goroutine straight back up, where a locked goroutine's yield hands
//     the P to another thread and back (four futex calls and two context
//     switches, a hundred times a second per process).
//
// The cost is what the runtime cannot do meanwhile: with the only P held
// by a thread blocked in a raw call, no other goroutine of the process
// runs until the call returns, and a solo process does not collect
// garbage at all. A loop that waits for its peer returns within
// microseconds while the run goes on; one whose peer hangs waits, as a C
// process would, until the row fails or the test binary ends, which
// kills the process (internal/child).
var solo bool

// Solo makes the calling process a solo process. Call it once, before the
// loop's goroutine starts; it cannot be undone, so only a process that
// exists for the loop (a child) may call it.
func Solo() {
	runtime.GOMAXPROCS(1)
	// No garbage collection: a loop allocates nothing, and without
	// collections no other goroutine (a mark worker, a finalizer) becomes
	// runnable, so none can run on the loop's thread, with its private fd
	// table, while the Yielder releases its lock.
	debug.SetGCPercent(-1)
	solo = true
}

// IsSolo reports whether Solo was called.
func IsSolo() bool { return solo }

// Syscall6 is a system call that may block waiting for a peer (accept,
// connect, send, recv, read or write on a pipe): raw in a solo process,
// through the runtime otherwise, where other goroutines need the P. It is
// nosplit, as is all down to the SYSCALL: a pointer into the caller's
// stack passed as a uintptr stays valid only while no stack growth moves
// it (callers keep heap buffers alive past the call: runtime.KeepAlive).
//
//go:nosplit
func Syscall6(trap, a1, a2, a3, a4, a5, a6 uintptr) (r1, r2 uintptr, err unix.Errno) {
	if solo {
		return RawSyscall6(trap, a1, a2, a3, a4, a5, a6)
	}
	return unix.Syscall6(trap, a1, a2, a3, a4, a5, a6)
}
