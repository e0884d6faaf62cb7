package thread

import (
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

// TestYielderOnThread yields on a Run thread: the goroutine must come back
// to the same thread.
func TestYielderOnThread(t *testing.T) {
	err := Run(func() error {
		tid := unix.Gettid()
		var y Yielder
		for i := range 4 {
			y.Tick(time.Now().Add(time.Duration(i) * YieldEvery))
			if got := unix.Gettid(); got != tid {
				t.Errorf("after yield %d the goroutine runs on thread %d, not %d", i, got, tid)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
