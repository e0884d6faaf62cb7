//go:build linux

package main

import (
	"math"
	"slices"

	"github.com/aclements/go-moremath/stats"
)

// changeInterval returns the confidence interval (at benchstat's 95%)
// of a compared row's change, for the test its verdict used: with boots
// as samples, Welch's interval for the difference of the mean logs of
// boot medians; per sample, the Hodges-Lehmann interval that goes with
// the U-test (the order statistics of all n1·n2 differences of logs at
// the ranks where U's distribution puts the interval's ends, hlRank). Either
// end is ±Inf where the samples are too few to bound it; values <= 0 are
// taken relative to the old center instead of as logs.
func changeInterval(row *Row) (lo, hi float64) {
	if row.Old == nil || row.New == nil {
		return math.NaN(), math.NaN()
	}
	if b := row.Boot; b != nil {
		tr := transform(slices.Concat(b.Old, b.New), b.Log)
		mo, vo := meanVar(tr(b.Old))
		mn, vn := meanVar(tr(b.New))
		se := math.Sqrt(vo/float64(b.N1) + vn/float64(b.N2))
		d := mn - mo
		w := 0.0
		if se > 0 {
			w = tQuantile(1-(1-confidence)/2, b.DF) * se
		}
		if b.Log {
			return math.Expm1(d - w), math.Expm1(d + w)
		}
		return (d - w) / math.Abs(mo), (d + w) / math.Abs(mo)
	}
	x, y := row.Old.Values, row.New.Values
	log := positive(x) && positive(y)
	tr := transform(slices.Concat(x, y), log)
	lx, ly := tr(x), tr(y)
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
	dl, dh := diffs[k-1], diffs[len(diffs)-k]
	if log {
		return math.Expm1(dl), math.Expm1(dh)
	}
	m := math.Abs(median(x))
	return dl / m, dh / m
}

// hlRank is the rank k (1-based) of the Hodges-Lehmann interval's lower
// end among the n1·n2 sorted differences: one more than the largest c
// with P(U <= c) <= (1-confidence)/2, from U's exact distribution
// without ties (go-moremath's) up to 20 samples a side (beyond, it takes
// moremath a tenth of a second and more), its normal approximation beyond.
func hlRank(n1, n2 int) int {
	tail := (1 - confidence) / 2
	if n1 > 20 || n2 > 20 {
		f1, f2 := float64(n1), float64(n2)
		return int(math.Floor(f1*f2/2 - normal.InvCDF(1-tail)*math.Sqrt(f1*f2*(f1+f2+1)/12)))
	}
	u := stats.UDist{N1: n1, N2: n2}
	c := -1
	for c+1 <= n1*n2 && u.CDF(float64(c+1)) <= tail {
		c++
	}
	return c + 1
}

func positive(v []float64) bool {
	for _, x := range v {
		if !(x > 0) {
			return false
		}
	}
	return true
}

// transform returns logs where log is set, else values relative to the
// magnitude of the median of all (unchanged where that is 0).
func transform(all []float64, log bool) func([]float64) []float64 {
	scale := 1.0
	if !log {
		if m := math.Abs(median(all)); m > 0 {
			scale = m
		}
	}
	return func(v []float64) []float64 {
		out := make([]float64, len(v))
		for i, x := range v {
			if log {
				out[i] = math.Log(x)
			} else {
				out[i] = x / scale
			}
		}
		return out
	}
}
