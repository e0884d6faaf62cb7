//go:build linux

package thread

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/kbench/kbench/internal/procfs"

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
// exists for the loop (a child) may call it. Its error says only that
// the runtime's monitor thread could not be put in SCHED_IDLE
// (idleMonitor); the process is solo either way.
func Solo() error {
	runtime.GOMAXPROCS(1)
	// No garbage collection: a loop allocates nothing, and without
	// collections no other goroutine (a mark worker, a finalizer) becomes
	// runnable, so none can run on the loop's thread, with its private fd
	// table, while the Yielder releases its lock.
	debug.SetGCPercent(-1)
	solo = true
	return idleMonitor()
}

// idleMonitor puts the runtime's monitor thread (sysmon) in SCHED_IDLE.
// In a solo process the only P is always running (the loop holds it
// through its raw calls), so sysmon never parks: it wakes every 10 ms to
// look for Ps to retake and goroutines to preempt, and polls the network,
// a switch to one more thread 100 times a second in each process, which
// the C reference tools do not have (TCP_CRR 16 flows' share:
// results/2026-12-05-floor-2.md). A solo process needs none of that work (raw calls, a
// loop that yields by itself, no garbage collection), so it runs at the
// lowest priority the kernel has: on a CPU with nothing else to run, and
// preempted by any workload thread that wakes there.
//
// sysmon is the thread asleep in nanosleep(2) (the runtime's usleep); the
// runtime's idle threads wait in futexes.
func idleMonitor() error {
	if !MayLeaveIdle() {
		// A thread the monitor clones inherits SCHED_IDLE, and the loop
		// may run on one (Run puts it back): where the kernel would keep
		// it there, the monitor stays at the normal policy.
		return errors.New("thread: the runtime's monitor thread stays at the normal policy: this process may not leave SCHED_IDLE again (needs CAP_SYS_NICE or RLIMIT_NICE of 20)")
	}
	self, want := unix.Gettid(), fmt.Sprintf("%d ", unix.SYS_NANOSLEEP)
	for range 1000 {
		tids, err := procfs.Host.Threads(os.Getpid())
		if err != nil {
			return fmt.Errorf("thread: finding the runtime's monitor thread: %v", err)
		}
		mon := 0
		for _, tid := range tids {
			if tid == self {
				continue
			}
			b, err := os.ReadFile(procfs.Host.Path(fmt.Sprintf("self/task/%d/syscall", tid)))
			if errors.Is(err, fs.ErrNotExist) {
				continue // a thread that ended meanwhile
			} else if err != nil {
				return fmt.Errorf("thread: finding the runtime's monitor thread: %v", err)
			}
			if strings.HasPrefix(string(b), want) {
				if mon != 0 {
					mon = -1 // two asleep: look again
					break
				}
				mon = tid
			}
		}
		if mon > 0 {
			attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_IDLE}
			if err := unix.SchedSetAttr(mon, &attr, 0); err != nil {
				return fmt.Errorf("thread: sched_setattr(%d, SCHED_IDLE) for the runtime's monitor thread: %v", mon, err)
			}
			return nil
		}
		time.Sleep(100 * time.Microsecond)
	}
	return errors.New("thread: no one thread of this process sleeps in nanosleep(2), as the runtime's monitor thread (sysmon) does")
}

// MayLeaveIdle reports whether a thread of this process may go from
// SCHED_IDLE back to the normal policy, as the kernel decides it
// (CAP_SYS_NICE, or RLIMIT_NICE and the nice value), by trying on a
// throw-away thread.
func MayLeaveIdle() bool {
	ok := make(chan bool)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		idle := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_IDLE}
		normal := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_NORMAL}
		ok <- unix.SchedSetAttr(0, &idle, 0) == nil && unix.SchedSetAttr(0, &normal, 0) == nil
	}()
	return <-ok
}

// SoloGODEBUG is the GODEBUG setting a solo process starts with
// (internal/child adds it to its children's, after the user's): no
// preemption by signal. The runtime's monitor preempts a goroutine it has
// found running for 10 ms, which a loop is when it waits that long in a
// raw call (its peer descheduled), with a SIGURG to its thread: the
// kernel interrupts and restarts the call around the runtime's handler,
// a wakeup and two switches the reference tool does not have, for
// nothing, as the handler finds the thread in a system call and leaves
// the preemption to the loop's next function call.
const SoloGODEBUG = "asyncpreemptoff=1"

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
