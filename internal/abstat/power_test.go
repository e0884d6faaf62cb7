//go:build linux

package abstat

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kbench/kbench/internal/abmath"
	"github.com/kbench/kbench/internal/abstat/sim"
)

// resamplings is how many simulated comparisons each power test runs.
// The share flagged is binomial: at a true power of 0.8 its standard
// deviation is √(0.8·0.2/2000) = 0.9%, so sampling alone keeps it within
// 0.8 ± 0.027 (3 standard deviations) in all but 3 runs in 1000, and the
// fixed seeds make the outcome the same every run. The tests accept
// 0.72-0.88: that sampling spread plus what the formula approximates
// (Welch's denominator where the sides' boots differ). The two central
// t quantiles for Welch's test were flagged in 68%.
const (
	resamplings      = 2000
	powerLo, powerHi = 0.72, 0.88
	detectAlpha      = 0.05
	detectThreshold  = 0.05
)

// TestPowerBoots: three boots a side, each a real run (A and A'). An
// injected change equal to the MDE kbcompare reports is flagged by
// Welch's test in about 80% of simulated 3+3 comparisons. The fixtures
// were all run in one boot, so they hold no real layout shift: each
// simulated boot is a real run, drawn at random from the six and centered
// on its median, moved by a layout factor exp(ε), ε normal with the
// between-boot spread kbcompare reported (the t-test's own assumption).
func TestPowerBoots(t *testing.T) {
	old := sim.Assemble(t, "old.txt", sim.BootFiles("a", sim.BootsA, nil)...)
	nw := sim.Assemble(t, "new.txt", sim.BootFiles("a2", sim.BootsB, nil)...)
	r, err := Compare(old, nw, defaults)
	if err != nil {
		t.Fatal(err)
	}
	row := rowOf(t, r, "sec/op", sim.SyscallRow)
	p := row.Power
	if row.boot == nil || p == nil || p.Test != "welch" || !(p.MDE > 0) {
		t.Fatalf("boot comparison %+v, power %+v; want Welch with an MDE", row.boot, p)
	}
	runsOf := realRuns(t) // the six real runs, each centered on its median
	rng := rand.New(rand.NewPCG(22, 2))
	boots := func(n int, scale float64) *BootSamples {
		s := &BootSamples{}
		for i := range n {
			run := runsOf[rng.IntN(len(runsOf))]
			f := scale * math.Exp(row.Between*rng.NormFloat64())
			for _, x := range run {
				s.Add(string(rune('a'+i)), f*x, 0)
			}
		}
		return s
	}
	flagged := 0
	for range resamplings {
		a, b := boots(3, 1), boots(3, 1+p.MDE)
		if c, _, _ := compareBoots(a, b, abmath.ScaleOf(a.all(), b.all())); c.p <= detectAlpha {
			flagged++
		}
	}
	share := float64(flagged) / resamplings
	t.Logf("3+3 boots, between %.2f%%: MDE %.2f%%, flagged in %.1f%% of %d; need %d boots for %g%%",
		100*row.Between, 100*p.MDE, 100*share, resamplings, p.Need, 100*detectThreshold)
	if share < powerLo || share > powerHi {
		t.Errorf("a change of the MDE (%.2f%%) was flagged in %.1f%% of simulated comparisons, want %g-%g%%",
			100*p.MDE, 100*share, 100*powerLo, 100*powerHi)
	}
}

// realRuns returns the sec/op samples of the six real A and A' runs,
// each divided by its median.
func realRuns(t *testing.T) [][]float64 {
	t.Helper()
	var out [][]float64
	for _, f := range []string{"a", "a2"} {
		for i := range 3 {
			one := sim.Assemble(t, "run.txt", sim.BootFiles(f, sim.BootsA, nil)[i])
			r, err := Compare(one, one, defaults)
			if err != nil {
				t.Fatal(err)
			}
			v := sorted(rowOf(t, r, "sec/op", sim.SyscallRow), 0)
			m := abmath.Median(v)
			for j := range v {
				v[j] /= m
			}
			out = append(out, v)
		}
	}
	return out
}
