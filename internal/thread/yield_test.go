package thread

import (
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestYielderTick(t *testing.T) {
	yields := 0
	defer func(f func()) { gosched = f }(gosched)
	gosched = func() { yields++ }

	var y Yielder
	t0 := time.Now()
	for _, c := range []struct {
		at   time.Duration
		want int
	}{
		{0, 0}, // the first tick starts the clock
		{time.Millisecond, 0},
		{YieldEvery - time.Microsecond, 0},
		{YieldEvery, 1},
		{YieldEvery + time.Millisecond, 1},
		{3 * YieldEvery, 2},
	} {
		y.Tick(t0.Add(c.at))
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
		t0 := time.Now()
		for i := range 4 {
			y.Tick(t0.Add(time.Duration(i) * YieldEvery))
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
