//go:build linux

package thread

import (
	"fmt"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// YieldEvery is how often a Yielder passes its goroutine through the Go
// scheduler at most: just under the 10 ms after which the runtime's
// monitor treats a goroutine as running too long, since each yield of a
// locked goroutine costs a handoff between threads. A gap that
// overshoots (a slow iteration between ticks) costs at most one take of
// the P, or one preemption signal, before the next tick yields.
const YieldEvery = 9 * time.Millisecond

// Yielder keeps a goroutine that lives in blocking system calls on a Run
// thread from looking stuck to the Go runtime.
//
// The runtime's monitor (sysmon) preempts a goroutine that has not been
// through the scheduler for 10 ms; when it finds that goroutine in a
// system call, it takes the thread's P instead. A loop of blocking
// syscalls that never yields is then caught on every sysmon tick (20 us
// while it keeps taking Ps), because each P the thread takes on its way
// out of the syscall has not been scheduled recently either: sysmon
// spins, and every take sends the thread down the slow exit path, which
// costs netbench's TCP_CRR a context switch per transaction and a tenth
// of its rate (results/2026-11-30-first-references.md). A runtime.Gosched every YieldEvery
// keeps the P freshly scheduled at the cost of a handoff to another
// thread and back (futex calls) about a hundred times a second; the
// goroutine stays on its thread. In a solo process (Solo) the yield costs
// no handoff: the goroutine's lock is released for it, and the thread
// that holds the only P picks the goroutine straight back up, which Err
// checks.
type Yielder struct {
	last, prev time.Duration // the last yield (or first Tick), and the last Tick
	begun      bool
	tid        int // the loop's thread, in a solo process's Run thread; 0 otherwise
	err        error
}

// Tick yields if the next tick, as far after this one as this one is
// after the previous, would come more than YieldEvery after the last yield
// (or the first Tick), and reports whether it did. So ticks 1 ms apart
// yield every 9 ms and ticks 4 ms apart every 8 ms: the gaps between
// yields stay under the monitor's 10 ms as long as those between ticks
// are steady and under YieldEvery, where yielding once YieldEvery had
// passed let ticks 4 ms apart yield every 12 ms, each gap a preemption
// signal (on a slow machine, a block of a fast row's transactions). now
// is the caller's Clock reading, so a loop that already reads the clock
// pays nothing more; a loop that does not can call Tick every few
// iterations, as long as they take well under YieldEvery.
func (y *Yielder) Tick(now time.Duration) bool {
	if !y.begun {
		y.last, y.prev, y.begun = now, now, true
		if solo && onRunThread() {
			y.tid = unix.Gettid()
		}
		return false
	}
	gap := now - y.prev
	y.prev = now
	if now-y.last+gap <= YieldEvery {
		return false
	}
	y.last = now
	if y.tid == 0 {
		gosched()
		return true
	}
	runtime.UnlockOSThread()
	gosched()
	runtime.LockOSThread()
	if now := unix.Gettid(); now != y.tid && y.err == nil {
		y.err = fmt.Errorf("thread: the loop came back from a yield on thread %d, not %d; its private fd table and CPU pin stayed behind", now, y.tid)
	}
	return true
}

// Err reports whether a yield in a solo process brought the goroutine
// back on another thread, which a loop must check when it ends: the
// thread holding the process's only P picks the goroutine back up, so
// this is not expected to happen.
func (y *Yielder) Err() error { return y.err }

// epoch is Clock's zero.
var epoch = time.Now()

// Clock is the monotonic time since the process started, from one reading
// of the vDSO clock (time.Since on a time with a monotonic reading);
// time.Now reads the wall clock too, which doubles the cost.
func Clock() time.Duration { return time.Since(epoch) }

// gosched is runtime.Gosched, replaced in tests.
var gosched = runtime.Gosched
