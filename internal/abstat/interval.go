//go:build linux

package abstat

import (
	"github.com/kbench/kbench/internal/abmath"
	"math"
	"slices"

	"github.com/aclements/go-moremath/stats"
)

// changeInterval returns the confidence interval (at abmath.Confidence) of a
// compared row's change, for the test its verdict used: with boots as
// samples, Welch's interval for the difference of the means of boot
// medians on the row's Scale; per sample, the Hodges-Lehmann interval
// that goes with the U-test (the order statistics of all n1·n2
// differences at the ranks where U's distribution puts the interval's
// ends, hlRank). Either end is ±Inf where the samples are too few to
// bound it.
func changeInterval(row *Row) (lo, hi float64) {
	if row.Old == nil || row.New == nil {
		return math.NaN(), math.NaN()
	}
	sc := row.Scale
	if b := row.Boot; b != nil {
		mo, vo := abmath.MeanVar(sc.ToAll(b.Old))
		mn, vn := abmath.MeanVar(sc.ToAll(b.New))
		se := math.Sqrt(vo/float64(b.N1) + vn/float64(b.N2))
		d := mn - mo
		w := 0.0
		if se > 0 {
			w = abmath.TQuantile(1-(1-abmath.Confidence)/2, b.DF) * se
		}
		return sc.Change(d-w, mo), sc.Change(d+w, mo)
	}
	lx, ly := sc.ToAll(row.Old.Values), sc.ToAll(row.New.Values)
	var diffs []float64
	for _, a := range lx {
		for _, b := range ly {
			diffs = append(diffs, b-a)
		}
	}
	slices.Sort(diffs)
	k := hlRank(len(lx), len(ly))
	if k < 1 {
		return math.Inf(-1), math.Inf(1)
	}
	c := abmath.Median(lx)
	return sc.Change(diffs[k-1], c), sc.Change(diffs[len(diffs)-k], c)
}

// hlRank is the rank k (1-based) of the Hodges-Lehmann interval's lower
// end among the n1·n2 sorted differences: one more than the largest c
// with P(U <= c) <= (1-abmath.Confidence)/2, from U's exact distribution
// without ties (go-moremath's) up to 20 samples a side (beyond, it takes
// moremath a tenth of a second and more), its normal approximation beyond.
func hlRank(n1, n2 int) int {
	tail := (1 - abmath.Confidence) / 2
	if n1 > 20 || n2 > 20 {
		f1, f2 := float64(n1), float64(n2)
		return int(math.Floor(f1*f2/2 - stats.StdNormal.InvCDF(1-tail)*math.Sqrt(f1*f2*(f1+f2+1)/12)))
	}
	u := stats.UDist{N1: n1, N2: n2}
	c := -1
	for c+1 <= n1*n2 && u.CDF(float64(c+1)) <= tail {
		c++
	}
	return c + 1
}
