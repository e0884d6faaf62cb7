//go:build linux

package abstat

import (
	"math"
	"math/rand/v2"
	"path"
	"slices"
	"testing"

	"github.com/kbench/kbench/internal/abmath"
	"github.com/kbench/kbench/internal/abstat/sim"
)

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
	at5 := reportOfRows(s, s.DrawRows(rng, boots, 5, d), defaults)
	at20 := reportOfRows(s, s.DrawRows(rng, boots, 20, d), defaults)
	var n, bad int
	for _, sr := range s.Rows {
		row := at5.Find(path.Base(sr.Pkg), "sec/op", sr.Name)
		c := ComponentsOf(abmath.ScaleOf(row.Samples[0].All(), row.Samples[1].All()), row.Samples[0], row.Samples[1])
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
		c20 := ComponentsOf(abmath.ScaleOf(r20.Samples[0].All(), r20.Samples[1].All()), r20.Samples[0], r20.Samples[1])
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
			m := abmath.Median(draw)
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
