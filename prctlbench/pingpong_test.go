//go:build linux

package prctlbench

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kbench/kbench/internal/child"
	"github.com/kbench/kbench/internal/cpus"
	"github.com/kbench/kbench/internal/limits"
	"github.com/kbench/kbench/internal/peer"
	"github.com/kbench/kbench/internal/procfs"
	"github.com/kbench/kbench/internal/region"
	"github.com/kbench/kbench/internal/skip"
)

// pingPongOnce starts the sides, runs one round of n round trips timed
// by t and ends them.
func pingPongOnce(cpuA, cpuB, n int, shared bool, t region.Timer) (int, error) {
	s, err := startPingPong(cpuA, cpuB, shared)
	if err != nil {
		return 0, err
	}
	sw, err := s.round(n, t)
	if err != nil {
		s.close() // the round's error again
		return 0, err
	}
	return sw, s.close()
}

// hookTimer is a region.Timer that records its calls and runs start, if
// set, at each StartTimer.
type hookTimer struct {
	calls []string
	start func()
}

func (h *hookTimer) StartTimer() {
	h.calls = append(h.calls, "start")
	if h.start != nil {
		h.start()
	}
}
func (h *hookTimer) StopTimer()  { h.calls = append(h.calls, "stop") }
func (h *hookTimer) ResetTimer() { h.calls = append(h.calls, "reset") }

// TestPingPongRounds runs three rounds on the same sides in each shape:
// each round is timed once, switches at least once per round trip, and
// in mm=separate runs in the same two children; ending the sides leaves
// no process and no fd.
func TestPingPongRounds(t *testing.T) {
	for _, shared := range []bool{false, true} {
		t.Run(fmt.Sprintf("shared=%v", shared), func(t *testing.T) { testPingPongRounds(t, shared) })
	}
}

func testPingPongRounds(t *testing.T, shared bool) {
	usable := limits.NeedCPUs(t, "two sides pinned to CPUs of their own", 2)
	skip.NeedProcs(t, 2, runtime.GOMAXPROCS(0))
	fds := countFds(t)
	s, err := startPingPong(usable[0], usable[1], shared)
	if err != nil {
		t.Fatal(err)
	}
	kids, err := child.Children()
	if err != nil {
		t.Fatal(err)
	}
	if want := map[bool]int{false: 2, true: 0}[shared]; len(kids) != want {
		t.Errorf("%d child processes %v with the sides started, want %d", len(kids), kids, want)
	}
	var tm hookTimer
	for round, n := range []int{100, 2000, 3000} {
		switches, err := s.round(n, &tm)
		if err != nil {
			t.Fatalf("round %d of %d round trips: %v", round, n, err)
		}
		if switches < 0 {
			s.close()
			t.Skip("no voluntary_ctxt_switches in /proc/thread-self/status")
		}
		if switches < n {
			t.Errorf("round %d: %d voluntary switches for %d round trips", round, switches, n)
		}
		t.Logf("round %d: %d round trips, %d voluntary context switches", round, n, switches)
	}
	if want := []string{"start", "stop", "start", "stop", "start", "stop"}; !slices.Equal(tm.calls, want) {
		t.Errorf("timer calls %v, want %v", tm.calls, want)
	}
	if now, err := child.Children(); err != nil || !slices.Equal(now, kids) {
		t.Errorf("children %v after the rounds (%v), want the same as at the start, %v", now, err, kids)
	}
	if err := s.close(); err != nil {
		t.Fatal(err)
	}
	if left, err := child.Children(); err != nil || len(left) != 0 {
		t.Errorf("processes left: %v (%v)", left, err)
	}
	if err := limits.SettleFds(); err != nil {
		t.Fatal(err)
	}
	if after := countFds(t); after != fds {
		t.Errorf("fds: %d before, %d after", fds, after)
	}
}

// TestPingPongRowKeepsSides: a row's gets return the sides it started
// first until the CPUs change; a failed round makes the next get start
// new ones.
func TestPingPongRowKeepsSides(t *testing.T) {
	usable := limits.NeedCPUs(t, "two sides pinned to CPUs of their own", 2)
	skip.NeedProcs(t, 2, runtime.GOMAXPROCS(0))
	var row peer.Kept[*pingPongSides]
	round := func(n int) error {
		return row.Round(func(s *pingPongSides) error { _, err := s.round(n, nil); return err })
	}
	first, err := getPingPong(&row, usable[0], usable[1], true)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		s, err := getPingPong(&row, usable[0], usable[1], true)
		if err != nil {
			t.Fatal(err)
		}
		if s != first {
			t.Fatal("a second get with the same CPUs started new sides")
		}
		if err := round(100); err != nil {
			t.Fatal(err)
		}
	}
	swapped, err := getPingPong(&row, usable[1], usable[0], true)
	if err != nil {
		t.Fatal(err)
	}
	if swapped == first {
		t.Error("a get with other CPUs kept the old sides")
	}
	put(swapped.held.toPong[1], 99) // pong expects 0 first
	if err := round(100); err == nil {
		t.Fatal("a round with a wrong counter passed")
	}
	again, err := getPingPong(&row, usable[1], usable[0], true)
	if err != nil {
		t.Fatal(err)
	}
	if again == swapped {
		t.Error("a get after a failed round kept the failed sides")
	}
	if err := round(100); err != nil {
		t.Fatal(err)
	}
	if err := row.Close(); err != nil {
		t.Fatalf("closing a row whose failed round was reported: %v", err)
	}
}

// TestPingPongDetectsWrongCounter: a counter that is not the next one
// fails the round, in pong (a stray counter in its pipe, mm=shared,
// where the parent holds the pipes) and in ping (an echo that is not the
// counter sent), and a side left waiting for the failed one ends.
func TestPingPongDetectsWrongCounter(t *testing.T) {
	usable := limits.NeedCPUs(t, "two sides pinned to CPUs of their own", 2)
	skip.NeedProcs(t, 2, runtime.GOMAXPROCS(0))
	s, err := startPingPong(usable[0], usable[1], true)
	if err != nil {
		t.Fatal(err)
	}
	put(s.held.toPong[1], 41)
	_, err = s.round(10, nil)
	if err == nil || !strings.Contains(err.Error(), "pong 0: read counter 41, want 0") {
		t.Errorf("a stray counter before pong's first: %v, want pong's error", err)
	}
	if cerr := s.close(); cerr == nil {
		t.Error("ending sides whose round failed returned no error")
	}

	p, err := newPingPong()
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	// The fds are read here: the pipe orders the echo before p.close, but
	// the race detector cannot see that through raw read and write calls.
	in, out := p.toPong[0], p.toPing[1]
	go func() {
		if expect(in, 0) == nil {
			put(out, 41) // not the 0 that was sent
		}
	}()
	if err := ping(p.toPing[0], p.toPong[1], 0); err == nil || !strings.Contains(err.Error(), "ping 0: read counter 41, want 0") {
		t.Fatalf("wrong echo not detected: %v", err)
	}
}

// TestPingPongFailedPinDoesNotHang pins one side to a CPU that does not
// exist; the other must see the round fail and end.
func TestPingPongFailedPinDoesNotHang(t *testing.T) {
	usable, err := cpus.Usable()
	if err != nil {
		t.Fatal(err)
	}
	for _, shared := range []bool{false, true} {
		_, err = pingPongOnce(usable[0], 1<<12, 10, shared, nil)
		if err == nil || !strings.Contains(err.Error(), "sched_setaffinity") {
			t.Fatalf("shared=%v: err = %v, want the failed pin", shared, err)
		}
	}
	if left, err := child.Children(); err != nil || len(left) != 0 {
		t.Fatalf("processes left: %v (%v)", left, err)
	}
}

// A pong process killed in the middle fails the round, saying so, and
// leaves no process.
func TestPingPongKilledSideFails(t *testing.T) {
	usable := limits.NeedCPUs(t, "two sides pinned to CPUs of their own", 2)
	kill := func() {
		time.Sleep(50 * time.Millisecond)
		pids, err := child.Children()
		if err != nil || len(pids) == 0 {
			t.Errorf("no child process to kill: %v (%v)", pids, err)
			return
		}
		unix.Kill(pids[0], unix.SIGKILL)
	}
	// Bounded (seconds of round trips), so that a kill that finds no
	// child ends in a failure rather than a hang.
	_, err := pingPongOnce(usable[0], usable[1], 1<<18, false, &hookTimer{start: func() { go kill() }})
	if err == nil || !strings.Contains(err.Error(), "SIGKILL") {
		t.Fatalf("side killed mid-round: %v, want an error naming SIGKILL", err)
	}
	if left, err := child.Children(); err != nil || len(left) != 0 {
		t.Fatalf("processes left: %v (%v)", left, err)
	}
}

// TestPingPongSwitchReadErrors: a status file that cannot be read, or
// whose count is not a number, fails the run; only a kernel that prints
// no voluntary_ctxt_switches line gives -1 (the check skipped, with a
// note). readStatus is substituted in this process, so the sides run as
// threads; the processes' sides count through the same countSwitches.
func TestPingPongSwitchReadErrors(t *testing.T) {
	usable := limits.NeedCPUs(t, "two sides pinned to CPUs of their own", 2)
	saved := readStatus
	t.Cleanup(func() { readStatus = saved })
	for _, c := range []struct {
		name   string
		read   func() (*procfs.Status, error)
		errSub string // "" = no error, switches -1
	}{
		{"unreadable", func() (*procfs.Status, error) { return nil, errors.New("EMFILE") }, "EMFILE"},
		{"not a number", func() (*procfs.Status, error) {
			return procfs.ParseStatus("status", []byte("voluntary_ctxt_switches:\tlots\n")), nil
		}, "not a number"},
		{"no such line", func() (*procfs.Status, error) { return procfs.ParseStatus("status", []byte("Name:\tx\n")), nil }, ""},
	} {
		readStatus = c.read
		switches, err := pingPongOnce(usable[0], usable[1], 10, true, nil)
		switch {
		case c.errSub == "" && (err != nil || switches != -1):
			t.Errorf("%s: switches %d, err %v; want -1 and no error", c.name, switches, err)
		case c.errSub != "" && (err == nil || !strings.Contains(err.Error(), c.errSub)):
			t.Errorf("%s: switches %d, err %v; want an error naming %q", c.name, switches, err, c.errSub)
		}
	}
}

func countFds(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// TestPingPongPlacement: pinned sides are seen where they were pinned,
// round after round (same-cpu/op 1 on one CPU, 0 on two), and a pong
// that leaves its pin fails the round, in processes and in threads.
func TestPingPongPlacement(t *testing.T) {
	usable := limits.NeedCPUs(t, "sides on one CPU and on two", 2)
	skip.NeedProcs(t, 2, runtime.GOMAXPROCS(0))
	for _, shared := range []bool{false, true} {
		for _, c := range []struct {
			a, b  int
			share float64
		}{{usable[0], usable[0], 1}, {usable[0], usable[1], 0}} {
			s, err := startPingPong(c.a, c.b, shared)
			if err != nil {
				t.Fatal(err)
			}
			for round := range 2 {
				if _, err := s.round(2000, nil); err != nil {
					s.close()
					t.Fatalf("shared=%v CPUs %d and %d, round %d: %v", shared, c.a, c.b, round, err)
				}
				if share, ok := s.seen.Share(); !ok || share != c.share {
					t.Errorf("shared=%v CPUs %d and %d, round %d: same-CPU share %v (%v), want %v", shared, c.a, c.b, round, share, ok, c.share)
				}
			}
			if err := s.close(); err != nil {
				t.Fatal(err)
			}
		}
		s, err := startMoving(usable[0], usable[0], shared, usable[1]+1)
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.round(2000, nil)
		s.close()
		want := fmt.Sprintf("ping-pong 0's pong, pinned to CPU %d, was seen on CPU %d", usable[0], usable[1])
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("shared=%v: a pong that left its pin: %v, want %q", shared, err, want)
		}
	}
}
