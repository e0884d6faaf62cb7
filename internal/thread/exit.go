//go:build linux

package thread

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/kbench/kbench/internal/procfs"
	"golang.org/x/sys/unix"
)

// SlowExit receives a line about a thread that is slow to die: Run calls
// it once the wait has lasted SlowExitAfter and again each time the wait
// doubles, and keeps waiting. It prints to stderr; tests replace it. The
// line starts with a capital, so that benchstat, reading go test's
// output, never takes it for a "key: value" configuration line.
var SlowExit = func(msg string) { fmt.Fprintln(os.Stderr, msg) }

// SlowExitAfter is how long Run waits for a thread's death before it says
// so through SlowExit.
const SlowExitAfter = 10 * time.Second

// The wait's clockwork, shortened in tests: the first look at a thread
// still alive after its function returned, and the least time between two
// looks for it to be found kept (see keptWatch).
var (
	slowExitAfter = SlowExitAfter
	firstLook     = time.Second
	parkedFor     = time.Second
)

// alive is waitExit's liveness probe, replaced in tests to slow a death
// down.
var alive = tgkillAlive

// waitExit waits until thread tid no longer exists, for as long as that
// takes. A non-leader thread is released (its task unhashed) as it
// exits, after which tgkill with signal 0 fails with ESRCH, much as
// waitpid returns once a forked child is gone. (Its seccomp filters are
// put after that on Linux 6.1, in do_exit before it on later kernels.)
// The wait yields the CPU (sched_yield) rather than spinning in Go, so
// that an exiting thread on the same CPU can finish: 1000 times, for at
// most 1 ms, since on a busy machine one yield can last long. Then it
// sleeps, 50 µs at first and longer as the wait grows (at most 1/64 of
// the time waited, up to 10 ms), so that the waiter does not slow a slow
// death further.
//
// No wall-clock limit fails the wait: a kernel whose exit path is slow
// (see seccompbench's package doc for one) is measured, not failed, and
// -test.timeout is the user's. From firstLook on, the wait looks at the
// thread in /proc: a thread the kernel is exiting (PF_EXITING) is waited
// for; one the runtime kept (asleep outside the exit path, or running
// other goroutines) is not going to die, and the wait fails (see keptWatch).
func waitExit(tid int) error {
	pid := os.Getpid()
	start := time.Now()
	nextLook := firstLook
	nextReport := slowExitAfter
	var kept keptWatch
	sleep := 50 * time.Microsecond
	for spins := 0; ; spins++ {
		ok, err := alive(tid)
		if err != nil {
			return fmt.Errorf("thread: tgkill(%d, %d, 0): %v", pid, tid, err)
		}
		if !ok {
			return nil
		}
		waited := time.Since(start)
		if spins < 1000 && waited < time.Millisecond {
			unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
			continue
		}
		if waited >= nextLook {
			st := readTaskState(tid)
			if why := kept.look(st); why != "" {
				return fmt.Errorf("thread: thread %d is not exiting %v after its function returned: %v, and %s; was its goroutine unlocked (runtime.UnlockOSThread), handing the thread back to the runtime?",
					tid, waited.Round(time.Millisecond), st, why)
			}
			nextLook = waited + parkedFor/2
			if waited >= nextReport {
				SlowExit(fmt.Sprintf("Waiting for thread %d: still alive %v after its function returned: %v", tid, waited.Round(time.Millisecond), st))
				nextReport *= 2
			}
		}
		time.Sleep(sleep)
		if sleep < 10*time.Millisecond && waited > 64*sleep {
			sleep *= 2
		}
	}
}

// tgkillAlive probes thread tid with tgkill and signal 0.
func tgkillAlive(tid int) (bool, error) {
	switch err := unix.Tgkill(os.Getpid(), tid, 0); err {
	case nil:
		return true, nil
	case unix.ESRCH:
		return false, nil
	default:
		return false, err
	}
}

// pfExiting is the kernel's PF_EXITING task flag (include/linux/sched.h),
// set by do_exit before it tears the task down.
const pfExiting = 0x4

// taskState is one look at a thread in /proc/self/task/<tid>.
type taskState struct {
	at       time.Time
	err      error         // reading stat failed (gone, or no /proc)
	state    string        // stat's state letter
	flags    uint64        // stat's task flags
	wchan    string        // where it sleeps, if the kernel says
	stack    string        // its kernel stack, innermost first, if readable (root)
	switches int64         // voluntary plus involuntary context switches; -1 if unknown
	queued   time.Duration // time spent runnable, waiting for a CPU (schedstat); -1 if unknown
}

func readTaskState(tid int) *taskState {
	pid := os.Getpid()
	st := &taskState{at: time.Now(), switches: -1, queued: -1}
	s, err := procfs.Host.TaskStat(pid, tid)
	if err != nil {
		st.err = err
		return st
	}
	st.state, st.flags = string(s.State), s.Flags
	if w, err := procfs.Host.Wchan(pid, tid); err == nil {
		st.wchan = w
	}
	if frames, err := procfs.Host.KernelStack(pid, tid); err == nil {
		st.stack = strings.Join(frames, " < ")
	}
	if _, wait, err := procfs.Host.SchedTimes(pid, tid); err == nil {
		st.queued = wait
	}
	if s, err := procfs.Host.TaskStatus(pid, tid); err == nil {
		v, err1 := s.Int("voluntary_ctxt_switches")
		n, err2 := s.Int("nonvoluntary_ctxt_switches")
		if err1 == nil && err2 == nil {
			st.switches = int64(v + n)
		}
	}
	return st
}

// exiting reports whether the kernel has begun tearing the thread down.
func (s *taskState) exiting() bool { return s.err == nil && s.flags&pfExiting != 0 }

// keptWatch decides, from looks at a thread whose function returned,
// whether the runtime kept the thread instead of letting it die. A thread
// on its way out runs the Go runtime's few instructions from the
// goroutine's end to exit(2), then is PF_EXITING for all of do_exit
// however slow. A thread the runtime kept is not exiting and either
// sleeps in a futex until it has work or runs other goroutines: so the
// thread is kept when, at looks parkedFor apart, it was not exiting and
// slept (S) without running in between, or ran keptSwitches times or more
// (its context-switch counts). Stopped (T) and traced (t) threads are
// not asleep: they resume when the user or debugger lets them.
type keptWatch struct {
	since  *taskState // first of the looks in a row that found it not exiting
	asleep *taskState // first of the looks in a row that found it asleep, not run since
}

// keptSwitches is how many context switches a thread that is not exiting
// makes before it counts as running other goroutines.
const keptSwitches = 100

// look takes a new look and says why the thread is kept, or "".
func (w *keptWatch) look(st *taskState) string {
	if st.err != nil || st.exiting() {
		*w = keptWatch{}
		return ""
	}
	if w.since == nil {
		w.since = st
	}
	if st.state != "S" || st.switches < 0 {
		w.asleep = nil
	} else if w.asleep == nil || w.asleep.switches != st.switches {
		w.asleep = st
	}
	if w.asleep != nil && st.at.Sub(w.asleep.at) >= parkedFor {
		return fmt.Sprintf("has slept without running for %v", st.at.Sub(w.asleep.at).Round(time.Millisecond))
	}
	if n := st.switches - w.since.switches; w.since.switches >= 0 && n >= keptSwitches && st.at.Sub(w.since.at) >= parkedFor {
		return fmt.Sprintf("has run %d times in %v", n, st.at.Sub(w.since.at).Round(time.Millisecond))
	}
	return ""
}

func (s *taskState) String() string {
	if s.err != nil {
		return fmt.Sprintf("state unknown (%v)", s.err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "state %s", s.state)
	if s.exiting() {
		b.WriteString(", exiting (PF_EXITING)")
	} else {
		b.WriteString(", not exiting")
	}
	if s.wchan != "" && s.wchan != "0" {
		fmt.Fprintf(&b, ", wchan %s", s.wchan)
	}
	if s.queued >= 0 {
		fmt.Fprintf(&b, ", %v waiting for a CPU in its life", s.queued.Round(time.Millisecond))
	}
	if s.stack != "" {
		fmt.Fprintf(&b, ", kernel stack %s", s.stack)
	}
	return b.String()
}
