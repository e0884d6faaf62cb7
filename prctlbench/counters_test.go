package prctlbench

import (
	"testing"

	"github.com/kbench/kbench/internal/counters"
	"github.com/kbench/kbench/internal/region"
)

// TestPingPongCountsSwitches: every round trip blocks each side once, so
// the region's counters must see at least two context switches per op.
func TestPingPongCountsSwitches(t *testing.T) {
	if !counters.Counted("context-switches") {
		t.Skip("context-switches is not counted here: see the fingerprint's counters lines")
	}
	res := region.Measure(t, 500, BenchmarkPingPong)
	if res.N == 0 {
		t.Skip("BenchmarkPingPong did not run here (it needs two usable CPUs; run it for its message)")
	}
	if cs, ok := res.Extra["cs/op"]; !ok || cs < 2 {
		t.Errorf("PingPong: %v context switches per round trip (reported: %v), want at least 2", cs, ok)
	}
}
