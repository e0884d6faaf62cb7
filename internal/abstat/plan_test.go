//go:build linux

package abstat

import (
	"math"
	"math/rand/v2"
	"path"
	"strings"
	"sync"
	"testing"

	"github.com/kbench/kbench/internal/abstat/sim"
)

// suiteCosts are the boot costs of the suite fixture's packages, from
// its go test times (PackageCost).
func suiteCosts(t *testing.T) map[string]Cost {
	t.Helper()
	files, _, err := Read(sim.File(t, sim.SuiteFile))
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

// plannedRun is what kbab -target does, drawn: a pilot of PilotBoots a
// side at PilotCounts, a plan, then one more boot a side of each row the
// plan leaves pending, at its package's count, replanning after each
// (counts kept), until no row is pending. It returns the drawn boots and
// the last plan; continuing looks at the plan alone, which looks at
// spreads alone.
func plannedRun(s *sim.Suite, rng *rand.Rand, d sim.Design, costs map[string]Cost, opts PlanOptions) ([]rowBoots, *Plan) {
	rows := make([]rowBoots, len(s.Rows))
	for _, n := range PilotCounts {
		d.Count = n
		for side := range 2 {
			for i := range s.Rows {
				rows[i][side] = append(rows[i][side], s.DrawRow(rng, i, side, d))
			}
		}
	}
	p := planOf(s, rows, costs, opts)
	opts.Counts = p.Counts()
	for range opts.MaxBoots {
		if len(p.Pending()) == 0 {
			break
		}
		for i, sr := range s.Rows {
			rp := p.Find(sr.Pkg, sr.Name)
			if rp == nil || !rp.Pending() {
				continue
			}
			d.Count = opts.Counts[sr.Pkg]
			for side := range 2 {
				rows[i][side] = append(rows[i][side], s.DrawRow(rng, i, side, d))
			}
		}
		p = planOf(s, rows, costs, opts)
	}
	return rows, p
}

// planDraws is how many planned runs the simulations draw per boot
// spread: a share of 80% is then known within ±5.7 points (two standard
// deviations of a binomial share), 2% within ±2.
const planDraws = 200

// TestPlannedRun: planned runs of the whole suite, drawn from its real
// run at the boot spreads of real comparisons (0.35 and 1.2 times the
// within-boot spread), with every boot a fresh draw:
//   - an A/A flags some row (by q, as the report does) in at most 5% of
//     draws: continuing by spreads alone keeps the false-alarm rate;
//   - one row made 10% slower among the rest, a row the plan reaches, is
//     called worse at its planned boots in at least 80% of draws.
func TestPlannedRun(t *testing.T) {
	if testing.Short() {
		t.Skip("planned runs of the whole suite: a minute")
	}
	s := sim.LoadSuite(t)
	costs := suiteCosts(t)
	opts := DefaultPlanOptions
	for k, between := range []float64{0.35, 1.2} {
		// The changed row: the first the plan of a long pilot reaches
		// with the fewest boots, so that the plan can reach it.
		rng := rand.New(rand.NewPCG(27, uint64(200+k)))
		d := sim.Design{Between: between}
		ref := planOf(s, drawRows(s, rng, 20, 10, d), costs, opts)
		var changed string
		bestBoots := math.MaxInt
		for _, pp := range ref.Pkgs {
			for _, rp := range pp.Rows {
				if rp.Reach && rp.Boots < bestBoots {
					changed, bestBoots = path.Base(pp.Pkg)+" "+rp.Name, rp.Boots
				}
			}
		}
		// Each draw its own seeded generator, two at a time: the same
		// outcome on any machine, in half the time on two CPUs.
		type outcome struct{ aa, ab bool }
		outs := make([]outcome, planDraws)
		var wg sync.WaitGroup
		for w := range 2 {
			wg.Go(func() {
				for i := w; i < planDraws; i += 2 {
					rng := rand.New(rand.NewPCG(27, uint64(1000*k+i)))
					rows, _ := plannedRun(s, rng, d, costs, opts)
					outs[i].aa = flagged(reportOfRows(s, rows, defaults)) > 0
					dc := d
					dc.Change = map[string]float64{changed: 0.10}
					rows, _ = plannedRun(s, rng, dc, costs, opts)
					pkg, name, _ := strings.Cut(changed, " ")
					row := reportOfRows(s, rows, defaults).Find(pkg, "sec/op", name)
					outs[i].ab = row != nil && row.Verdict == Worse
				}
			})
		}
		wg.Wait()
		var aa, ab int
		for _, o := range outs {
			if o.aa {
				aa++
			}
			if o.ab {
				ab++
			}
		}
		fa, power := float64(aa)/planDraws, float64(ab)/planDraws
		t.Logf("between %.2f×within: A/A flagged some row in %.1f%% of %d planned runs; %s +10%% called worse in %.1f%%",
			between, 100*fa, planDraws, changed, 100*power)
		if fa > 0.05 {
			t.Errorf("between %.2f×within: planned A/A flagged some row in %.1f%% of draws, want at most 5%%", between, 100*fa)
		}
		if power < 0.8 {
			t.Errorf("between %.2f×within: the row made 10%% slower was called worse in %.1f%% of planned runs, want at least 80%%", between, 100*power)
		}
	}
}

func BenchmarkPlannedRun(b *testing.B) {
	s := sim.LoadSuite(b)
	files, _, _ := Read(sim.File(b, sim.SuiteFile))
	costs := PackageCost(files)
	rng := rand.New(rand.NewPCG(1, 2))
	for b.Loop() {
		plannedRun(s, rng, sim.Design{Between: 0.35}, costs, DefaultPlanOptions)
	}
}
