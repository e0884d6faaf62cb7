//go:build linux

package abplan

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path"
	"slices"
	"testing"

	"github.com/kbench/kbench/internal/abfile"
	"github.com/kbench/kbench/internal/abmath"
	"github.com/kbench/kbench/internal/abstat"
	"github.com/kbench/kbench/internal/abstat/sim"
)

// packageCosts are the suite fixture's packages' costs, from its go
// test times (PackageCost).
func packageCosts(t *testing.T) map[string]Cost {
	t.Helper()
	files, _, err := abfile.Read(sim.File(t, sim.SuiteFile))
	if err != nil {
		t.Fatal(err)
	}
	return PackageCost(files)
}

type rowBoots = sim.RowBoots

// groupRows is drawn rows as Compare groups them (one sec/op table per
// package, each row's samples by boot), not judged: what a plan reads.
func groupRows(s *sim.Suite, rows []rowBoots) *abstat.Report {
	r := &abstat.Report{}
	tables := map[string]*abstat.Table{}
	for i, sr := range s.Rows {
		pkg := path.Base(sr.Pkg)
		t := tables[pkg]
		if t == nil {
			t = &abstat.Table{Pkg: pkg, Path: sr.Pkg, Unit: "sec/op", Better: -1}
			tables[pkg] = t
			r.Tables = append(r.Tables, t)
		}
		row := &abstat.Row{Name: sr.Name, Role: abstat.Primary, Samples: make([]*abstat.BootSamples, 2)}
		for side, boots := range rows[i] {
			row.Samples[side] = &abstat.BootSamples{}
			r.Boots[side] = max(r.Boots[side], len(boots))
		}
		s.Samples(i, rows[i], func(side int, boot string, v float64, iters int) { row.Samples[side].AddN(boot, v, iters) })
		t.Rows = append(t.Rows, row)
	}
	r.BootMode = r.Boots[0] >= abstat.MinBoots && r.Boots[1] >= abstat.MinBoots
	return r
}

// reportOfRows judges drawn rows as Compare would.
func reportOfRows(s *sim.Suite, rows []rowBoots, opts abstat.Options) *abstat.Report {
	r := groupRows(s, rows)
	r.Opts = opts
	r.Judge()
	return r
}

// pilotPlanOf plans the rows of drawn boots with the suite's costs.
func pilotPlanOf(s *sim.Suite, rows []rowBoots, costs map[string]Cost, opts PlanOptions) *Plan {
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
	costs := packageCosts(t)
	judge := abstat.Options{Threshold: 0, Alpha: abstat.DefaultOptions.Alpha, PerRow: true}
	const draws = 200
	for k, between := range []float64{0.35, 1.2} {
		rng := rand.New(rand.NewPCG(27, uint64(300+k)))
		d := sim.Design{Between: between}
		ref := pilotPlanOf(s, s.DrawRows(rng, 20, 10, d), costs, DefaultPlanOptions)
		// Each row on its own p, at the level the plan gave it.
		judge := judge
		judge.Alpha = ref.RowAlpha
		type planned struct {
			i      int
			rp     *PlanRow
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
			pp := ref.Pkgs[slices.IndexFunc(ref.Pkgs, func(p *PlanPkg) bool { return p.Pkg == sr.Pkg })]
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
						for range abstat.MinBoots {
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
			if math.Abs(share-abmath.TargetPower) > 0.25 {
				off = append(off, fmt.Sprintf("%s (%d boots, -count %d, mde %.1f%%): found in %.0f%%",
					s.Rows[p.i].Key(), p.rp.Boots, p.count, 100*p.rp.MDE, 100*share))
			}
		}
		mean := sum / float64(len(rows))
		t.Logf("between %.2f×within: %d rows at their planned designs, moved by their predicted mde, found in %.1f%% of draws on average (predicted %.0f%%); %d rows off by more than 25 points",
			between, len(rows), 100*mean, 100*abmath.TargetPower, len(off))
		for _, o := range off {
			t.Log("  " + o)
		}
		if math.Abs(mean-abmath.TargetPower) > 0.10 || len(off) > 0 {
			t.Errorf("between %.2f×within: predicted power %.0f%%, simulated %.1f%% on average, %d of %d rows off", between, 100*abmath.TargetPower, 100*mean, len(off), len(rows))
		}
	}
}

// TestPlanIgnoresTheDifference: the plan of an A/B is the plan of the
// A/A whose B is the same boots without the change: every figure of it
// comes from each side's spreads around its own center.
func TestPlanIgnoresTheDifference(t *testing.T) {
	s := sim.LoadSuite(t)
	costs := packageCosts(t)
	rng := rand.New(rand.NewPCG(27, 400))
	rows := s.DrawRows(rng, 3, 5, sim.Design{Between: 1})
	same := pilotPlanOf(s, rows, costs, DefaultPlanOptions)
	for i := range rows {
		nsOp := slices.Index(s.Rows[i].Units, "ns/op")
		rows[i] = slowed(rows[i], nsOp, 1.3)
	}
	moved := pilotPlanOf(s, rows, costs, DefaultPlanOptions)
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
