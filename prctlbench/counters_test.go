//go:build linux

package prctlbench

import (
	"runtime"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/kbench/kbench/internal/counters"
	"github.com/kbench/kbench/internal/cpus"
	"github.com/kbench/kbench/internal/peer"
	"github.com/kbench/kbench/internal/region"
)

// TestPingPongCountsSwitches: every round trip blocks each side once, so
// the region's counters must see at least two context switches per op,
// also when the sides are child processes (mm=separate).
func TestPingPongCountsSwitches(t *testing.T) {
	counters.All(t)
	if !counters.Counted("context-switches") {
		t.Skip("context-switches is not counted here: see the fingerprint's counters lines")
	}
	usable, err := cpus.Usable()
	if err != nil {
		t.Fatal(err)
	}
	if len(usable) < 2 || runtime.GOMAXPROCS(0) < 2 {
		t.Skipf("PingPong needs two usable CPUs and GOMAXPROCS >= 2; have %v and %d", usable, runtime.GOMAXPROCS(0))
	}
	var before unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_CHILDREN, &before); err != nil {
		t.Fatal(err)
	}
	var row peer.Kept[*pingPongSides]
	res := region.Measure(t, 500, func(b *testing.B) { benchPingPong(b, &row, false, peer.Cross) })
	if err := row.Close(); err != nil {
		t.Error(err)
	}
	if res.N == 0 {
		t.Fatal("BenchmarkPingPong failed or skipped (run it for its message)")
	}
	// The sides pinned to two CPUs were never seen on one.
	if same, ok := res.Extra["same-cpu/op"]; !ok || same != 0 {
		t.Errorf("PingPong cpu=cross: same-cpu/op %v (reported: %v), want 0", same, ok)
	}
	if cs, ok := res.Extra["cs/op"]; !ok || cs < 2 {
		t.Errorf("PingPong: %v context switches per round trip (reported: %v), want at least 2", cs, ok)
	}
	// The two sides' CPU time is counted although they are other
	// processes whose worker threads exit before the row ends. The
	// kernel's own account of the reaped sides (RUSAGE_CHILDREN, their
	// whole lives, start-up too) is the yardstick: the region must see a
	// good part of it (results/2026-12-02-prctlbench-cputime.md), not a few ns a round
	// trip (as it did when the counters stopped before the children were
	// reaped). Both
	// are CPU time, so a loaded machine, which stretches the wall time,
	// moves neither.
	if counters.Counted("task-clock") {
		var after unix.Rusage
		if err := unix.Getrusage(unix.RUSAGE_CHILDREN, &after); err != nil {
			t.Fatal(err)
		}
		cpu := func(r unix.Rusage) float64 {
			return float64(r.Utime.Nano() + r.Stime.Nano())
		}
		lives := (cpu(after) - cpu(before)) / float64(res.N)
		if !(lives > 0) {
			t.Fatalf("PingPong: the sides' CPU time is not among the reaped children's (%v ns/op): were they reaped?", lives)
		}
		if c := res.Extra["cpu-ns/op"]; !(c > 0.05*lives) {
			t.Errorf("PingPong: %v cpu-ns/op counted, the reaped sides used %.0f ns/op in all (RUSAGE_CHILDREN): the child processes' CPU time is missing", c, lives)
		}
	}
}
