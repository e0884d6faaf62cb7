//go:build linux

package seccompbench

import (
	"testing"

	"github.com/kbench/kbench/internal/counters"
	"github.com/kbench/kbench/internal/region"
)

// TestLoadCountsThreadWork: each stress-ng op runs on a fresh thread,
// which the kernel must switch in and out at least once, so the region's
// counters must see a context switch per op; and page faults, though
// fewer than one per op (Go gives a new thread the stacks of exited ones,
// already faulted in).
func TestLoadCountsThreadWork(t *testing.T) {
	skipUnsupported(t)
	counters.All(t)
	if !counters.Counted("page-faults") || !counters.Counted("context-switches") {
		t.Skip("page faults and context switches are not counted here: see the fingerprint's counters lines")
	}
	res := region.Measure(t, 50, func(b *testing.B) { benchLoad(b, loadShapes[0], "1") })
	if res.N == 0 {
		t.Fatal("the Load row failed (run the benchmark for its message)")
	}
	if cs := res.Extra["cs/op"]; cs < 1 {
		t.Errorf("stress-ng Load: %v context switches per op, want at least 1 for a fresh thread per op", cs)
	}
	if f := res.Extra["faults/op"]; !(f > 0) {
		t.Errorf("stress-ng Load: %v page faults per op, want some", f)
	}
	if c := res.Extra["cpu-ns/op"]; !(c > 0) {
		t.Errorf("stress-ng Load: %v CPU ns per op", c)
	}
}
