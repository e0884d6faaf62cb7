//go:build linux

package abmath

import (
	"math"
	"slices"
)

// Scale is how a row's values are tested, bounded and powered: as logs
// where every value is positive (a ratio is then a shift, so sec/op and
// the rates derived from it get one p), else as values relative to
// their magnitude, Unit (a B/op that is 0 in some runs).
type Scale struct {
	Log  bool
	Unit float64
}

// ScaleOf is the scale for values: logs where all are positive, else
// the unit the magnitude of their median, else their mean magnitude,
// else 1.
func ScaleOf(values ...[]float64) Scale {
	all := slices.Concat(values...)
	if len(all) > 0 && !slices.ContainsFunc(all, func(x float64) bool { return !(x > 0) }) {
		return Scale{Log: true}
	}
	s := Scale{Unit: 1}
	var sum float64 // of magnitudes
	for _, x := range all {
		sum += math.Abs(x)
	}
	if m := math.Abs(Median(all)); m > 0 {
		s.Unit = m
	} else if sum > 0 {
		s.Unit = sum / float64(len(all))
	}
	return s
}

// To maps a value onto the scale.
func (s Scale) To(x float64) float64 {
	if s.Log {
		return math.Log(x)
	}
	return x / s.Unit
}

// ToAll maps values onto the scale.
func (s Scale) ToAll(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = s.To(x)
	}
	return out
}

// From maps a point of the scale back to the values' units.
func (s Scale) From(y float64) float64 {
	if s.Log {
		return math.Exp(y)
	}
	return y * s.Unit
}

// Change is the relative change that a shift d on the scale makes to a
// center c (a point of the scale): exp(d)-1 with logs, d/|c| otherwise
// (d itself where c is 0).
func (s Scale) Change(d, c float64) float64 {
	if s.Log {
		return math.Expm1(d)
	}
	if c != 0 {
		return d / math.Abs(c)
	}
	return d
}

// Shift is the inverse of Change: the shift on the scale that changes c
// by the relative change rel.
func (s Scale) Shift(rel, c float64) float64 {
	if s.Log {
		return math.Log1p(rel)
	}
	if c != 0 {
		return rel * math.Abs(c)
	}
	return rel
}

// Median is the median of v (NaN for none).
func Median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Sorted(slices.Values(v))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// MeanVar is the mean of v and its sample variance: exactly that value
// and 0 where all are equal (a sum could round), 0 for one value.
func MeanVar(v []float64) (mean, variance float64) {
	if len(v) > 0 && !slices.ContainsFunc(v, func(x float64) bool { return x != v[0] }) {
		return v[0], 0
	}
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	if len(v) < 2 {
		return mean, 0
	}
	for _, x := range v {
		variance += (x - mean) * (x - mean)
	}
	return mean, variance / float64(len(v)-1)
}
