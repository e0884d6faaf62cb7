//go:build linux

package abstat

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path"
	"slices"
	"testing"

	"github.com/kbench/kbench/internal/abfile"
	"github.com/kbench/kbench/internal/abstat/sim"
)

// suiteCosts are the boot costs of the suite fixture's packages, from
// its go test times (PackageCost).
func suiteCosts(t *testing.T) map[string]Cost {
	t.Helper()
	files, _, err := abfile.Read(sim.File(t, sim.SuiteFile))
	if err != nil {
		t.Fatal(err)
	}
	return PackageCost(files)
}

// drawRows draws boots boots a side of every row at count samples.
func drawRows(s *sim.Suite, rng *rand.Rand, boots, count int, d sim.Design) []rowBoots {
	rows := make([]rowBoots, len(s.Rows))
	d.Count = count
	for side := range 2 {
		for range boots {
			for i := range s.Rows {
				rows[i][side] = append(rows[i][side], s.DrawRow(rng, i, side, d))
			}
		}
	}
	return rows
}

// TestComponentsRecoverDesign: from many boots of a drawn design, the
// components estimate the boot effect the design put in (Between ×
// the row's within-boot spread) and the within-boot spread, and the
// spread of boot medians the plan predicts at another count is the one
// drawn there.
func TestComponentsRecoverDesign(t *testing.T) {
	s := sim.LoadSuite(t)
	rng := rand.New(rand.NewPCG(27, 100))
	const boots = 60
	d := sim.Design{Between: 1.0}
	at5 := reportOfRows(s, drawRows(s, rng, boots, 5, d), defaults)
	at20 := reportOfRows(s, drawRows(s, rng, boots, 20, d), defaults)
	var n, bad int
	for _, sr := range s.Rows {
		row := at5.Find(path.Base(sr.Pkg), "sec/op", sr.Name)
		c := ComponentsOf(ScaleOf(row.Samples[0].All(), row.Samples[1].All()), row.Samples[0], row.Samples[1])
		want := d.Between * sr.Within
		if !(want > 0) {
			continue
		}
		n++
		got := math.Sqrt(c.Between)
		// 118 degrees of freedom: the spread is known within about ±13%
		// (two standard errors), more where the within-boot sampling
		// error is large against the boot effect.
		if math.Abs(got/want-1) > 0.35 {
			bad++
			t.Logf("%s: boot effect %.4f, drawn %.4f; within %.4f (fixture %.4f)", sr.Key(), got, want, math.Sqrt(c.Within), sr.Within)
		}
		// The spread of boot medians at count 20, predicted from count 5.
		r20 := at20.Find(path.Base(sr.Pkg), "sec/op", sr.Name)
		pred := math.Sqrt(c.CenterVar(20))
		c20 := ComponentsOf(ScaleOf(r20.Samples[0].All(), r20.Samples[1].All()), r20.Samples[0], r20.Samples[1])
		if obs := math.Sqrt(c20.Centers); math.Abs(pred/obs-1) > 0.35 {
			bad++
			t.Logf("%s: boot medians at count 20 spread %.4f, predicted from count 5 %.4f", sr.Key(), obs, pred)
		}
	}
	t.Logf("%d rows, %d estimates off by more than 35%%", n, bad)
	if n == 0 || bad > n/10 {
		t.Errorf("%d of %d rows' components off by more than 35%%", bad, n)
	}
}

// planOf plans the rows of drawn boots with the suite's costs.
func planOf(s *sim.Suite, rows []rowBoots, costs map[string]Cost, opts PlanOptions) *Plan {
	return NewPlan(groupRows(s, rows), costs, opts)
}

// slowed returns a row's boots with the new side's ns/op multiplied by f.
func slowed(rb rowBoots, nsOp int, f float64) rowBoots {
	var out rowBoots
	out[0] = rb[0]
	for _, boot := range rb[1] {
		var b []sim.Result
		for _, r := range boot {
			v := slices.Clone(r.Values)
			v[nsOp] *= f
			b = append(b, sim.Result{Iters: r.Iters, Values: v})
		}
		out[1] = append(out[1], b)
	}
	return out
}

// TestPlanPredictsPower: the power the plan predicts is the power its
// design has. From a long pilot (20 boots a side at -count=10) of the
// suite's real run, at the boot spreads of real comparisons, each row
// the plan reaches is drawn at its planned boots and count, moved by
// the mde the plan predicts there, and judged on its own p at the level
// the plan gave it (Plan.RowAlpha): over the rows it must be found in 80% of
// draws within 10 points, and no row may miss by more than 25.
func TestPlanPredictsPower(t *testing.T) {
	if testing.Short() {
		t.Skip("whole-suite draws at planned designs: seconds")
	}
	s := sim.LoadSuite(t)
	costs := suiteCosts(t)
	judge := Options{Threshold: 0, Alpha: defaults.Alpha, PerRow: true}
	const draws = 200
	for k, between := range []float64{0.35, 1.2} {
		rng := rand.New(rand.NewPCG(27, uint64(300+k)))
		d := sim.Design{Between: between}
		ref := planOf(s, drawRows(s, rng, 20, 10, d), costs, DefaultPlanOptions)
		// Each row on its own p, at the level the plan gave it.
		judge := judge
		judge.Alpha = ref.RowAlpha
		type planned struct {
			i      int
			rp     *RowPlan
			count  int
			found  int
			change float64
		}
		var rows []*planned
		d.Change = map[string]float64{}
		for i, sr := range s.Rows {
			rp := ref.Find(sr.Pkg, sr.Name)
			if rp == nil || !rp.Reach {
				continue
			}
			pp := ref.Pkgs[slices.IndexFunc(ref.Pkgs, func(p *PkgPlan) bool { return p.Pkg == sr.Pkg })]
			rows = append(rows, &planned{i: i, rp: rp, count: pp.Count})
			d.Change[sr.Key()] = rp.MDE
		}
		for range draws {
			rb := make([]rowBoots, len(s.Rows))
			for _, p := range rows {
				dd := d
				dd.Count = p.count
				for side := range 2 {
					for range p.rp.Boots {
						rb[p.i][side] = append(rb[p.i][side], s.DrawRow(rng, p.i, side, dd))
					}
				}
			}
			// Rows the plan does not reach: three boots, unchanged.
			for i := range s.Rows {
				if rb[i][0] == nil {
					dd := sim.Design{Between: between, Count: 3}
					for side := range 2 {
						for range MinBoots {
							rb[i][side] = append(rb[i][side], s.DrawRow(rng, i, side, dd))
						}
					}
				}
			}
			r := reportOfRows(s, rb, judge)
			for _, p := range rows {
				sr := s.Rows[p.i]
				if row := r.Find(path.Base(sr.Pkg), "sec/op", sr.Name); row.P <= judge.Alpha && row.Change > 0 {
					p.found++
				}
			}
		}
		var sum float64
		var off []string
		for _, p := range rows {
			share := float64(p.found) / draws
			sum += share
			// A row's own prediction also carries the long pilot's
			// error in its spreads (38 degrees of freedom: ±23% in the
			// variance), which moves its power by up to 15 points; 200
			// draws add ±5.7. A model that fails a row fails it by more.
			if math.Abs(share-TargetPower) > 0.25 {
				off = append(off, fmt.Sprintf("%s (%d boots, -count %d, mde %.1f%%): found in %.0f%%",
					s.Rows[p.i].Key(), p.rp.Boots, p.count, 100*p.rp.MDE, 100*share))
			}
		}
		mean := sum / float64(len(rows))
		t.Logf("between %.2f×within: %d rows at their planned designs, moved by their predicted mde, found in %.1f%% of draws on average (predicted %.0f%%); %d rows off by more than 25 points",
			between, len(rows), 100*mean, 100*TargetPower, len(off))
		for _, o := range off {
			t.Log("  " + o)
		}
		if math.Abs(mean-TargetPower) > 0.10 || len(off) > 0 {
			t.Errorf("between %.2f×within: predicted power %.0f%%, simulated %.1f%% on average, %d of %d rows off", between, 100*TargetPower, 100*mean, len(off), len(rows))
		}
	}
}

// TestPlanIgnoresTheDifference: the plan of an A/B is the plan of the
// A/A whose B is the same boots without the change: every figure of it
// comes from each side's spreads around its own center.
func TestPlanIgnoresTheDifference(t *testing.T) {
	s := sim.LoadSuite(t)
	costs := suiteCosts(t)
	rng := rand.New(rand.NewPCG(27, 400))
	rows := drawRows(s, rng, 3, 5, sim.Design{Between: 1})
	same := planOf(s, rows, costs, DefaultPlanOptions)
	for i := range rows {
		nsOp := slices.Index(s.Rows[i].Units, "ns/op")
		rows[i] = slowed(rows[i], nsOp, 1.3)
	}
	moved := planOf(s, rows, costs, DefaultPlanOptions)
	if same.Seconds == 0 || math.Abs(moved.Seconds/same.Seconds-1) > 1e-9 {
		t.Errorf("plan of the A/A %.1f s, of the same boots with B 30%% slower %.1f s; want them equal", same.Seconds, moved.Seconds)
	}
	for _, pp := range same.Pkgs {
		for _, rp := range pp.Rows {
			mp := moved.Find(pp.Pkg, rp.Name)
			if mp.Boots != rp.Boots || mp.Reach != rp.Reach || math.Abs(mp.MDE/rp.MDE-1) > 1e-6 || math.Abs(mp.Comp.Between-rp.Comp.Between) > 1e-12 {
				t.Errorf("%s: A/A plans %d boots (mde %.4f, between %.3g), B 30%% slower %d (mde %.4f, between %.3g)",
					rp.Name, rp.Boots, rp.MDE, rp.Comp.Between, mp.Boots, mp.MDE, mp.Comp.Between)
			}
		}
	}
}

// TestFitCost: boots at two counts separate a boot's cost from its
// samples' overhead; at one count the overhead is the boot's.
func TestFitCost(t *testing.T) {
	// wall = 12 s + 1.5 × timed, timed 4 and 8 s, as a pilot at -count=4
	// and -count=8 of 1 s samples.
	c := fitCost([]float64{4, 4, 8, 8}, []float64{18, 18.2, 24, 23.8})
	if math.Abs(c.Boot-12) > 0.3 || math.Abs(c.PerTimed-1.5) > 0.05 {
		t.Errorf("two counts: %+v, want boot 12 s and 1.5 s per timed second", c)
	}
	c = fitCost([]float64{4, 4.1}, []float64{18, 18.2})
	if math.Abs(c.Boot-14.05) > 1e-9 || c.PerTimed != 1 {
		t.Errorf("one count: %+v, want the whole overhead as the boot's (14.05 s)", c)
	}
}

// TestMedianVar: the sampling variance of the median is the normal
// one (π/2 σ²/n) for many normal residuals, and larger for residuals
// in two clusters, whose median jumps.
func TestMedianVar(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 500))
	var normal []float64
	for range 4000 {
		normal = append(normal, rng.NormFloat64())
	}
	slices.Sort(normal)
	for _, n := range []int{5, 9, 21} {
		want := math.Pi / 2 / float64(n)
		// Small n: the median's exact variance exceeds the asymptotic
		// one by a few percent (1.34/5 for n=5).
		if got := medianVar(normal, n); math.Abs(got/want-1) > 0.12 {
			t.Errorf("normal, n=%d: %.4f, want about %.4f", n, got, want)
		}
	}
	two := []float64{-1, -1, -1, -1, -1, 1, 1, 1, 1, 1}
	if got := medianVar(two, 5); got < 0.5 {
		t.Errorf("two clusters ±1, n=5: %.3f, want most of the clusters' variance 1", got)
	}
}

// TestMedianVarEven: for an even count the median's variance is the
// mean of two order statistics' exactly, as enumerating every draw of 4
// from 5 values (ties among them) and of 6 from 4 gives it.
func TestMedianVarEven(t *testing.T) {
	for _, c := range []struct {
		s []float64
		n int
	}{{[]float64{-2, -1, -1, 0.5, 3}, 4}, {[]float64{-1, 0, 0.2, 1}, 6}, {[]float64{-1, 0, 0.2, 1}, 2}} {
		var sum, sq, w float64
		idx := make([]int, c.n)
		for {
			draw := make([]float64, c.n)
			for i, j := range idx {
				draw[i] = c.s[j]
			}
			m := median(draw)
			sum, sq, w = sum+m, sq+m*m, w+1
			i := 0
			for ; i < c.n; i++ {
				idx[i]++
				if idx[i] < len(c.s) {
					break
				}
				idx[i] = 0
			}
			if i == c.n {
				break
			}
		}
		want := sq/w - (sum/w)*(sum/w)
		if got := medianVar(c.s, c.n); math.Abs(got-want) > 1e-9 {
			t.Errorf("median of %d from %v: variance %.6f, enumerated %.6f", c.n, c.s, got, want)
		}
	}
}
