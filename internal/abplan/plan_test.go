//go:build linux

package abplan

import (
	"math"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/abstat/sim"
)

// TestPlanFiles: two files are a pilot of the boots a side they both
// hold; one file's boots, taken in turn, an A/A pilot of half of them;
// fewer than two boots a side plan nothing.
func TestPlanFiles(t *testing.T) {
	a := sim.Assemble(t, "a.txt", sim.BootFiles("a", sim.BootsA, []float64{1, 1.03, 0.98})...)
	b := sim.Assemble(t, "b.txt", sim.BootFiles("b", sim.BootsB, nil)...)
	aa := sim.Assemble(t, "aa.txt", append(sim.BootFiles("a", sim.BootsA, nil), sim.BootFiles("a2", sim.BootsC, nil)...)...)
	for _, c := range []struct {
		paths []string
		pilot int
	}{{[]string{a, b}, 3}, {[]string{aa}, 3}} {
		d, err := PlanFiles(DefaultOptions(0.05), 20, c.paths...)
		if err != nil {
			t.Fatal(err)
		}
		rp := d.Find("github.com/kbench/kbench/seccompbench", sim.SyscallRow)
		if d.Opts.Pilot != c.pilot || rp == nil || rp.Status == NoPilot || rp.Need < c.pilot || d.Pkgs[0].BootCost != 20 {
			t.Errorf("%d files: pilot %d, row %+v, boot cost %g; want pilot %d, the row planned, boot cost 20 s", len(c.paths), d.Opts.Pilot, rp, d.Pkgs[0].BootCost, c.pilot)
		}
	}
	if _, err := PlanFiles(DefaultOptions(0.05), 0, a); err == nil || !strings.Contains(err.Error(), "pilot of 1 boot(s) a side: want at least 2") {
		t.Errorf("one file of 3 boots: %v, want a pilot too small", err)
	}
}

// TestFitBoot: boots at two counts separate a boot's cost from its
// samples' overhead; at one count the overhead is the boot's.
func TestFitBoot(t *testing.T) {
	// wall = 12 s + 1.5 × timed, timed 4 and 8 s, as a pilot at -count=4
	// and -count=8 of 1 s samples.
	if c := fitBoot([]float64{4, 4, 8, 8}, []float64{18, 18.2, 24, 23.8}); math.Abs(c-12) > 0.3 {
		t.Errorf("two counts: boot %g s, want 12 s", c)
	}
	if c := fitBoot([]float64{4, 4.1}, []float64{18, 18.2}); math.Abs(c-14.05) > 1e-9 {
		t.Errorf("one count: boot %g s, want the whole overhead (14.05 s)", c)
	}
}
