//go:build linux

package abstat

import (
	"math"
	"math/rand/v2"
	"path"
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
