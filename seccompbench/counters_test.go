package seccompbench

import (
	"testing"

	"github.com/kbench/kbench/internal/counters"
	"github.com/kbench/kbench/internal/region"
)

// TestLoadCountsPageFaults: each stress-ng op runs on a fresh thread,
// whose stack and thread-local pages fault in, so the region's counters
// must see page faults in every op.
func TestLoadCountsPageFaults(t *testing.T) {
	skipUnsupported(t)
	if !counters.Counted("page-faults") {
		t.Skip("page-faults is not counted here: see the fingerprint's counters lines")
	}
	res := region.Measure(t, 50, func(b *testing.B) { benchLoad(b, loadShapes[0], "1") })
	if res.N == 0 {
		t.Fatal("the Load row failed (run the benchmark for its message)")
	}
	if f, ok := res.Extra["faults/op"]; !ok || f < 1 {
		t.Errorf("stress-ng Load: %v page faults per op (reported: %v), want at least 1 for a fresh thread per op", f, ok)
	}
	if c := res.Extra["cpu-ns/op"]; !(c > 0) {
		t.Errorf("stress-ng Load: %v CPU ns per op", c)
	}
}
