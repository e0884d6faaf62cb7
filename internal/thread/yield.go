//go:build linux

package thread

import (
	"fmt"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// YieldEvery is the longest a Yielder lets pass between its goroutine's
// passes through the Go scheduler: just under the 10 ms after which the
// runtime's monitor treats a goroutine as running too long. A gap that
// overshoots costs one take of the P, or one signal, before the next yield.
const YieldEvery = 9 * time.Millisecond

// Yielder keeps a goroutine that lives in blocking system calls on a Run
// thread from looking stuck to the Go runtime.
//
// The runtime's monitor (sysmon) preempts a goroutine that has not been
// through the scheduler for 10 ms, by signal, or in a system call by
// taking its P, which costs netbench's TCP_CRR a context switch per
// transaction and a tenth of its rate (results/2026-11-30-first-references.md).
// A runtime.Gosched every YieldEvery keeps the P freshly scheduled, at the
// cost of a handoff to another thread and back (futex calls); in a solo
// process (Solo) the goroutine's lock is released for the yield and the
// thread holding the only P picks it straight back up, which Err checks.
type Yielder struct {
	last, prev time.Duration // the last yield (or first Tick), and the last Tick
	begun      bool
	tid        int // the loop's thread, in a solo process's Run thread; 0 otherwise
}

// Tick yields if the next tick, as far after this one as this one is
// after the previous, would come more than YieldEvery after the last
// yield (or the first Tick), and reports whether it did: ticks 4 ms apart
// yield every 8 ms, not every 12 (a preemption signal each). now is the
// caller's Clock reading, taken every few iterations well under YieldEvery.
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
	return true
}

// Err, called on the loop's goroutine at its end, reports a yield in a
// solo process that left it on another thread (not expected): one gettid
// here, not one a yield, as a goroutine that came back elsewhere stays.
func (y *Yielder) Err() error {
	if now := unix.Gettid(); y.tid != 0 && now != y.tid {
		return fmt.Errorf("thread: the loop came back from a yield on thread %d, not %d; its private fd table and CPU pin stayed behind", now, y.tid)
	}
	return nil
}

// epoch is Clock's zero.
var epoch = time.Now()

// Clock is the monotonic time since the process started, from one reading
// of the vDSO clock (time.Since on a time with a monotonic reading);
// time.Now reads the wall clock too, which doubles the cost.
func Clock() time.Duration { return time.Since(epoch) }

// gosched is runtime.Gosched, replaced in tests.
var gosched = runtime.Gosched
