//go:build linux

package prctlbench

import (
	"runtime"
	"testing"

	"github.com/kbench/kbench/internal/counters"
	"github.com/kbench/kbench/internal/cpus"
	"github.com/kbench/kbench/internal/peer"
	"github.com/kbench/kbench/internal/region"
)

// TestPingPongCountsSwitches: every round trip blocks each side once, so
// the region's counters must see at least two context switches per op,
// also when the sides are child processes (mm=separate).
func TestPingPongCountsSwitches(t *testing.T) {
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
	// processes whose worker threads exit before the row ends: each round
	// trip runs a write and a read on each side, so their CPU time is a
	// good part of the round trip's wall time, not a few ns (as it was
	// when the counters stopped before the children were reaped).
	if counters.Counted("task-clock") {
		ns := float64(res.T.Nanoseconds()) / float64(res.N)
		if c := res.Extra["cpu-ns/op"]; !(c > 0.2*ns) {
			t.Errorf("PingPong: %v cpu-ns/op for %.0f ns/op: the child processes' CPU time is missing", c, ns)
		}
	}
}
