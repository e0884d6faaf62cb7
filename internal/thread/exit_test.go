//go:build linux

package thread

import (
	"errors"
	"github.com/kbench/kbench/internal/procfs"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// shortClock shortens the wait's clockwork for a test.
func shortClock(t *testing.T, report, look, parked time.Duration) {
	t.Helper()
	r, l, p := slowExitAfter, firstLook, parkedFor
	slowExitAfter, firstLook, parkedFor = report, look, parked
	t.Cleanup(func() { slowExitAfter, firstLook, parkedFor = r, l, p })
}

// TestRunWaitsForSlowDeath: a thread that takes longer to die than every
// interval of the wait (a slow kernel's exit path, injected here by a probe
// that reports the thread alive after it is gone, until the wait has
// reported it three times) is waited for and reported, not failed.
func TestRunWaitsForSlowDeath(t *testing.T) {
	probeRseq() // its own throw-away thread, before the probe is slowed
	shortClock(t, 50*time.Millisecond, 10*time.Millisecond, 50*time.Millisecond)
	var mu sync.Mutex
	var msgs []string
	reports := func() int { mu.Lock(); defer mu.Unlock(); return len(msgs) }
	defer func(f func(string)) { SlowExit = f }(SlowExit)
	SlowExit = func(m string) { mu.Lock(); msgs = append(msgs, m); mu.Unlock() }
	defer func(f func(int) (bool, error)) { alive = f }(alive)
	alive = func(tid int) (bool, error) {
		ok, err := tgkillAlive(tid)
		if ok || err != nil {
			return ok, err
		}
		return reports() < 3, nil
	}

	start := time.Now()
	if err := Run(func() error { return nil }); err != nil {
		t.Fatalf("Run failed on a slow death: %v", err)
	}
	// Reports at 50, 100 and 200 ms or later: the wait went on through
	// three of them.
	if d := time.Since(start); d < 4*slowExitAfter {
		t.Errorf("Run returned after %v, before its third report was due (%v)", d, 4*slowExitAfter)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(msgs) != 3 {
		t.Fatalf("SlowExit called %d times, want 3: %q", len(msgs), msgs)
	}
	for _, m := range msgs {
		if !strings.HasPrefix(m, "Waiting for thread") || !strings.Contains(m, "still alive") {
			t.Errorf("SlowExit line %q does not say the thread is still alive and waited for", m)
		}
	}
	t.Logf("first report: %s", msgs[0])
}

// TestWaitExitFailsParkedThread: a thread that sleeps outside the exit
// path and does not run (here one blocked in read(2) on a pipe, as a
// thread the runtime kept sleeps in a futex) is not going to die, and the
// wait says so instead of waiting forever.
func TestWaitExitFailsParkedThread(t *testing.T) {
	shortClock(t, time.Hour, 10*time.Millisecond, 200*time.Millisecond)
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	tidc := make(chan int)
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		tidc <- unix.Gettid()
		var b [1]byte
		unix.Read(p[0], b[:])
	}()
	tid := <-tidc
	defer func() { unix.Close(p[1]); <-done; unix.Close(p[0]) }()

	start := time.Now()
	err := waitExit(tid)
	if err == nil {
		t.Fatalf("waitExit(%d) returned nil for a thread blocked in read", tid)
	}
	if !strings.Contains(err.Error(), "not exiting") || !strings.Contains(err.Error(), "state S") {
		t.Errorf("error %q does not say the thread sleeps and is not exiting", err)
	}
	if d := time.Since(start); d < parkedFor {
		t.Errorf("waitExit gave up after %v, before two looks %v apart", d, parkedFor)
	}
	t.Log(err)
}

func TestTaskStateString(t *testing.T) {
	// flags 0x404044 has PF_EXITING; a stat line with this comm and flags
	// is parsed by procfs (its fixtures test that).
	st, err := procfs.ParseStat("stat", []byte("484 (kb (x) y) D 1 1 1 0 -1 4210756 0 0 0 0 0 0 0"))
	if err != nil || st.State != 'D' || st.Flags != 0x404044 {
		t.Fatalf("ParseStat = %c, %#x, %v; want D, 0x404044", st.State, st.Flags, err)
	}
	s := &taskState{state: string(st.State), flags: st.Flags}
	if !s.exiting() || !strings.Contains(s.String(), "exiting (PF_EXITING)") {
		t.Errorf("flags %#x: exiting() = %v, %q", st.Flags, s.exiting(), s)
	}
	r := &taskState{state: "R", flags: pfExiting, queued: 3900 * time.Millisecond}
	if got := r.String(); !strings.Contains(got, "state R, exiting") || !strings.Contains(got, "3.9s waiting for a CPU") {
		t.Errorf("a runnable exiting thread reads %q", got)
	}
}

// TestKeptWatch: looks at a thread that sleeps without running, or runs
// keptSwitches times, while not exiting, say it is kept; a thread that is
// exiting, stopped, gone, or runs a little is waited for.
func TestKeptWatch(t *testing.T) {
	shortClock(t, time.Hour, time.Millisecond, time.Second)
	t0 := time.Now()
	at := func(ms int, state string, flags uint64, switches int64) *taskState {
		return &taskState{at: t0.Add(time.Duration(ms) * time.Millisecond), state: state, flags: flags, switches: switches}
	}
	gone := &taskState{at: t0.Add(3 * time.Second), err: errors.New("no such file")}
	for _, c := range []struct {
		name  string
		looks []*taskState
		kept  string // a word of the verdict at the last look; "" for none
	}{
		{"asleep", []*taskState{at(0, "S", 0, 7), at(500, "S", 0, 7), at(1000, "S", 0, 7)}, "slept"},
		{"asleep, woken", []*taskState{at(0, "S", 0, 7), at(500, "S", 0, 8), at(1000, "S", 0, 8)}, ""},
		{"asleep, woken, asleep", []*taskState{at(0, "S", 0, 7), at(500, "S", 0, 8), at(1500, "S", 0, 8)}, "slept"},
		{"running others", []*taskState{at(0, "R", 0, 7), at(600, "S", 0, 60), at(1100, "R", 0, 107)}, "run 100 times"},
		{"running a little", []*taskState{at(0, "R", 0, 7), at(1100, "R", 0, 20)}, ""},
		{"exiting, asleep", []*taskState{at(0, "S", pfExiting, 7), at(5000, "S", pfExiting, 7)}, ""},
		{"exiting, running", []*taskState{at(0, "R", pfExiting, 7), at(5000, "D", pfExiting, 900)}, ""},
		{"exits midway", []*taskState{at(0, "S", 0, 7), at(900, "D", pfExiting, 7), at(1500, "S", 0, 7)}, ""},
		{"stopped", []*taskState{at(0, "T", 0, 7), at(5000, "T", 0, 7)}, ""},
		{"switches unknown", []*taskState{at(0, "S", 0, -1), at(5000, "S", 0, -1)}, ""},
		{"gone", []*taskState{at(0, "S", 0, 7), gone}, ""},
	} {
		var w keptWatch
		var why string
		for i, l := range c.looks {
			why = w.look(l)
			if why != "" && i < len(c.looks)-1 {
				t.Errorf("%s: kept at look %d of %d: %s", c.name, i+1, len(c.looks), why)
			}
		}
		if c.kept == "" && why != "" {
			t.Errorf("%s: kept (%s), want waited for", c.name, why)
		}
		if c.kept != "" && !strings.Contains(why, c.kept) {
			t.Errorf("%s: verdict %q, want one with %q", c.name, why, c.kept)
		}
	}
}
