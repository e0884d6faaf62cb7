//go:build linux

package abmath

import "math"

// Confidence is benchstat's default confidence level for the ranges and
// intervals.
const Confidence = 0.95

// BootInterval is the center of boot medians v on scale sc (the mean
// there, mapped back: a geometric mean with logs) and its Confidence t
// interval; the ends are NaN for fewer than two boots.
func BootInterval(v []float64, sc Scale) (c, lo, hi float64) {
	m, vr := MeanVar(sc.ToAll(v))
	if len(v) < 2 {
		return sc.From(m), math.NaN(), math.NaN()
	}
	w := TQuantile(1-(1-Confidence)/2, float64(len(v)-1)) * math.Sqrt(vr/float64(len(v)))
	return sc.From(m), sc.From(m - w), sc.From(m + w)
}
