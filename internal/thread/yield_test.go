//go:build linux

package thread

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestYielderTick(t *testing.T) {
	yields := 0
	defer func(f func()) { gosched = f }(gosched)
	gosched = func() { yields++ }

	var y Yielder
	t0 := Clock()
	ms := time.Millisecond
	for _, c := range []struct {
		at   time.Duration
		want int
	}{
		{0, 0}, // the first tick starts the clock
		// Ticks 1 ms apart: the yield comes at the tick after which the
		// next would come more than YieldEvery after the start.
		{1 * ms, 0}, {2 * ms, 0}, {3 * ms, 0}, {4 * ms, 0}, {5 * ms, 0}, {6 * ms, 0}, {7 * ms, 0}, {8 * ms, 0},
		{YieldEvery, 1},
		// A gap of 6 ms: the next tick would come too late, so this one
		// yields, 6 ms after the last yield.
		{YieldEvery + 6*ms, 2},
		{YieldEvery + 7*ms, 2},
		// A tick long after (a slow iteration) yields at once.
		{4 * YieldEvery, 3},
	} {
		before := yields
		yielded := y.Tick(t0 + c.at)
		if yielded != (yields > before) {
			t.Fatalf("the tick at %v reported yielded=%v, but %d yields happened before and %d after", c.at, yielded, before, yields)
		}
		if yields != c.want {
			t.Fatalf("after a tick at %v: %d yields, want %d", c.at, yields, c.want)
		}
	}
}

// TestYielderOnThread yields for real on a Run thread: each yield must
// happen and the goroutine must come back to the same thread.
func TestYielderOnThread(t *testing.T) {
	yields := 0
	defer func(f func()) { gosched = f }(gosched)
	gosched = func() { yields++; runtime.Gosched() }

	err := Run(func() error {
		tid := unix.Gettid()
		var y Yielder
		t0 := Clock()
		for i := range 4 {
			y.Tick(t0 + time.Duration(i)*YieldEvery)
			if got := unix.Gettid(); got != tid {
				t.Errorf("after tick %d the goroutine runs on thread %d, not %d", i, got, tid)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if yields != 3 {
		t.Errorf("4 ticks YieldEvery apart yielded %d times, want 3 (the first starts the clock)", yields)
	}
}

// TestYielderSolo yields for real as a solo process's loop does: the lock
// is released for the yield, the goroutine must come back to its thread,
// and the thread must still die when Run's function returns (Run waits
// for that and fails if the thread went back to the runtime), so the lock
// was restored.
func TestYielderSolo(t *testing.T) {
	yields := 0
	defer func(f func()) { gosched = f }(gosched)
	gosched = func() { yields++; runtime.Gosched() }
	// As in a solo process: one P, so no idle P's thread can take the
	// goroutine while its lock is released.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	solo = true
	defer func() { solo = false }()

	var y Yielder
	err := Run(func() error {
		t0 := Clock()
		for i := range 4 {
			y.Tick(t0 + time.Duration(i)*YieldEvery)
		}
		return y.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	if yields != 3 {
		t.Errorf("4 ticks YieldEvery apart yielded %d times, want 3", yields)
	}
}

// TestYielderErrOtherThread: a loop that ends on another thread than the
// one its first tick ran on (a yield that brought it back elsewhere) gets
// the error from Err, which compares the threads once, at the end.
func TestYielderErrOtherThread(t *testing.T) {
	err := Run(func() error {
		y := Yielder{tid: unix.Gettid() + 1, begun: true} // the first tick's thread, as if another
		return y.Err()
	})
	if err == nil || !strings.Contains(err.Error(), "came back from a yield on thread") {
		t.Fatalf("Err on another thread than the first tick's: %v, want the thread named", err)
	}
}
