package thread

import (
	"runtime"
	"time"
)

// YieldEvery is how often a Yielder passes its goroutine through the Go
// scheduler: just under the 10 ms after which the runtime's monitor
// treats a goroutine as running too long, since each yield of a locked
// goroutine costs a handoff between threads. A gap that overshoots (a
// slow iteration between ticks) costs at most one take of the P before
// the next tick yields.
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
// of its rate (docs/results.md). A runtime.Gosched every YieldEvery
// keeps the P freshly scheduled at the cost of a handoff to another
// thread and back (futex calls) about a hundred times a second; the
// goroutine stays on its thread.
type Yielder struct {
	last time.Time
}

// Tick yields if YieldEvery has passed since the last yield, or since the
// first Tick. now is the caller's clock reading (time.Now()), so a loop
// that already reads the clock pays nothing more; a loop that does not can
// call Tick every few iterations, as long as they take well under
// YieldEvery.
func (y *Yielder) Tick(now time.Time) {
	if y.last.IsZero() {
		y.last = now
		return
	}
	if now.Sub(y.last) < YieldEvery {
		return
	}
	y.last = now
	gosched()
}

// gosched is runtime.Gosched, replaced in tests.
var gosched = runtime.Gosched
