package prctlbench

import (
	"runtime"
	"testing"

	"github.com/kbench/kbench/internal/counters"
	"github.com/kbench/kbench/internal/cpus"
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
	res := region.Measure(t, 500, func(b *testing.B) { benchPingPong(b, false) })
	if res.N == 0 {
		t.Fatal("BenchmarkPingPong failed or skipped (run it for its message)")
	}
	if cs, ok := res.Extra["cs/op"]; !ok || cs < 2 {
		t.Errorf("PingPong: %v context switches per round trip (reported: %v), want at least 2", cs, ok)
	}
}
