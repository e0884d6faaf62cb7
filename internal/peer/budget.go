//go:build linux

package peer

import (
	"sync/atomic"

	"github.com/kbench/kbench/internal/thread"
)

// BudgetSize is the bytes a Budget takes in a Mem.
const BudgetSize = 24

// Budget is a round's ops, shared by the sides that do them: each takes
// tickets 0..n-1 a chunk at a time (Taker), and any side can abort the
// round for all, so that a failed side stops the others within a chunk.
type Budget struct {
	n, next *atomic.Int64
	abort   *atomic.Bool
}

// NewBudget is the budget at off (a multiple of 8) in m: the parent's and
// every side's view of the same words.
func NewBudget(m *Mem, off int) *Budget {
	return &Budget{n: m.Int64(off), next: m.Int64(off + 8), abort: m.Bool(off + 16)}
}

// Reset sets the budget to n ops and clears the abort flag: the parent's,
// before a round.
func (b *Budget) Reset(n int64) {
	b.n.Store(n)
	b.next.Store(0)
	b.abort.Store(false)
}

// Abort stops every side's taking.
func (b *Budget) Abort() { b.abort.Store(true) }

// Aborted reports whether a side aborted the round.
func (b *Budget) Aborted() bool { return b.abort.Load() }

// Taken is how many tickets were handed out, at most the budget.
func (b *Budget) Taken() int64 { return min(b.next.Load(), b.n.Load()) }

// Taker is one side's cursor on a Budget: it takes chunk tickets at a
// time, and ticks its Yielder at each take (a chunk is a few hundred
// microseconds of work, well under thread.YieldEvery), so that the Go
// runtime's monitor leaves a side's thread alone.
type Taker struct {
	b      *Budget
	chunk  int64
	i, end int64
	Y      thread.Yielder
	ticked bool
	l      Link  // looks at each take; nil: none
	taken  int64 // tickets this Taker has handed out
}

// NewTaker takes tickets from b chunk at a time.
func NewTaker(b *Budget, chunk int) *Taker {
	return &Taker{b: b, chunk: int64(max(1, chunk))}
}

// Looking has the Taker call l.Look at each take of a chunk, with the
// tickets it has handed out, for the row's placement meter (Meter), and
// returns it.
func (t *Taker) Looking(l Link) *Taker {
	t.l = l
	return t
}

// Next returns the next ticket, or false once the budget is spent or
// aborted.
func (t *Taker) Next() (int64, bool) {
	t.ticked = false
	if t.i < t.end {
		i := t.i
		t.i++
		t.taken++
		return i, true
	}
	if t.b.abort.Load() {
		return 0, false
	}
	n := t.b.n.Load()
	i := t.b.next.Add(t.chunk) - t.chunk
	if i >= n {
		return 0, false
	}
	t.i, t.end = i+1, min(i+t.chunk, n)
	now := thread.Clock()
	t.ticked = t.Y.Tick(now)
	if t.l != nil {
		t.l.Look(t.taken, now)
	}
	t.taken++
	return i, true
}

// Ticked reports whether the last Next yielded the thread (its time then
// holds a yield: a side that times its ops reads the clock again).
func (t *Taker) Ticked() bool { return t.ticked }

// Err is the Yielder's error: a thread the runtime would not let go.
func (t *Taker) Err() error { return t.Y.Err() }
