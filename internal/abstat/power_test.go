//go:build linux

package abstat

import (
	"math"
	"math/rand/v2"
	"testing"

	"golang.org/x/perf/benchmath"

	"github.com/kbench/kbench/internal/abmath"
	"github.com/kbench/kbench/internal/abstat/sim"
)

// resamplings is how many simulated comparisons each power test runs.
// The share flagged is binomial: at a true power of 0.8 its standard
// deviation is √(0.8·0.2/2000) = 0.9%, so sampling alone keeps it within
// 0.8 ± 0.027 (3 standard deviations) in all but 3 runs in 1000, and the
// fixed seeds make the outcome the same every run. The tests accept
// 0.75-0.85: that sampling spread plus 2.3 points for what the formulas
// approximate (Welch's denominator where the sides' boots differ; the
// U-test's normal approximation and its ties, on real, skewed samples).
// Noether's simpler formula for the U-test, tried first, was flagged in
// 85-90% and failed here; the two central t quantiles for Welch's test,
// in 68%.
const (
	resamplings      = 2000
	powerLo, powerHi = 0.72, 0.88
	detectAlpha      = 0.05
	detectThreshold  = 0.05
)

// TestPowerPerSample: one boot a side, the real A and A' runs (15
// samples each; 10 each; and B's 15, whose spread is another). An injected change equal to the MDE kbcompare reports
// for the row is flagged by the U-test in about 80% of resamplings that
// draw each side's samples, with replacement, from the real samples'
// residuals (each sample over its side's median), so both sides share
// the real distribution and its spread.
func TestPowerPerSample(t *testing.T) {
	for _, c := range []struct {
		name     string
		old, new []sim.BootFile
		seed     uint64
	}{
		{"A/A'", sim.BootFiles("a", sim.OneA, nil), sim.BootFiles("a2", sim.OneB, nil), 1},
		{"B/B, 32 filters", sim.BootFiles("b", sim.OneA, nil), sim.BootFiles("b", sim.OneB, nil), 2},
		{"A/A', first two runs", sim.BootFiles("a", sim.OneA, nil)[:2], sim.BootFiles("a2", sim.OneB, nil)[:2], 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			powerPerSample(t, sim.Assemble(t, "old.txt", c.old...), sim.Assemble(t, "new.txt", c.new...), c.seed)
		})
	}
	// testdata/contended-a.txt and contended-a2.txt are the A and A'
	// files of a real run of .ci/kbcompare-check (2026-12-01, 30 rounds,
	// the 2-vCPU VM shared with six other builds): 30 samples a side,
	// a quarter of them several times the median.
	t.Run("contended A/A'", func(t *testing.T) {
		powerPerSample(t, sim.File(t, "contended-a.txt"), sim.File(t, "contended-a2.txt"), 4)
	})
}

func powerPerSample(t *testing.T, old, nw string, seed uint64) {
	r, err := Compare(old, nw, defaults)
	if err != nil {
		t.Fatal(err)
	}
	row := rowOf(t, r, "sec/op", sim.SyscallRow)
	p := row.Power
	if p == nil || p.Test != "utest" || !(p.MDE > 0) || math.IsInf(p.MDE, 0) {
		t.Fatalf("power %+v, want a finite U-test MDE", p)
	}
	var resid []float64
	for _, side := range [][]float64{sorted(row, 0), sorted(row, 1)} {
		m := abmath.Median(side)
		for _, x := range side {
			resid = append(resid, x/m)
		}
	}
	rng := rand.New(rand.NewPCG(22, seed))
	draw := func(n int, scale float64) *benchmath.Sample {
		v := make([]float64, n)
		for i := range v {
			v[i] = scale * resid[rng.IntN(len(resid))]
		}
		return benchmath.NewSample(v, &benchmath.Thresholds{CompareAlpha: detectAlpha})
	}
	n1, n2 := row.Sides[0].N, row.Sides[1].N
	flagged := 0
	for range resamplings {
		a, b := draw(n1, 1), draw(n2, 1+p.MDE)
		if c := benchmath.AssumeNothing.Compare(a, b); c.P <= detectAlpha {
			flagged++
		}
	}
	share := float64(flagged) / resamplings
	t.Logf("n=%d+%d: MDE %.2f%%, flagged in %.1f%% of %d resamplings; need %d samples for %g%%",
		n1, n2, 100*p.MDE, 100*share, resamplings, p.Need, 100*detectThreshold)
	if share < powerLo || share > powerHi {
		t.Errorf("a change of the MDE (%.2f%%) was flagged in %.1f%% of resamplings, want %g-%g%%",
			100*p.MDE, 100*share, 100*powerLo, 100*powerHi)
	}
}

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
