package main

import (
	"math"
	"slices"
)

// changeInterval returns the confidence interval (at benchstat's 95%)
// of a compared row's change, for the test its verdict used: with boots
// as samples, Welch's interval for the difference of the mean logs of
// boot medians; per sample, the Hodges-Lehmann interval that goes with
// the U-test (the order statistics of all n1·n2 differences of logs that
// the test's normal approximation puts at the interval's ends). Either
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
	n1, n2 := float64(len(lx)), float64(len(ly))
	k := int(math.Floor(n1*n2/2 - normal.InvCDF(1-(1-confidence)/2)*math.Sqrt(n1*n2*(n1+n2+1)/12)))
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
