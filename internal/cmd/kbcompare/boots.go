//go:build linux

package main

import (
	"errors"
	"math"
	"slices"

	"github.com/aclements/go-moremath/stats"
)

// MinBoots is how many boots each side needs before boots are the samples
// (the package doc says why boots, and why Welch's t-test on their logs).
const MinBoots = 3

// BootCmp compares a row with boots as the samples.
type BootCmp struct {
	N1, N2    int       // boots on each side
	Old, New  []float64 // per-boot medians, in file order
	OldCenter float64   // geometric mean of Old (arithmetic where a median is <= 0)
	NewCenter float64
	Log       bool    // the test and the centers use logs
	T, DF, P  float64 // Welch's t statistic, degrees of freedom, two-sided p
	// Within is the spread of samples inside a boot, Between that of boot
	// medians around their kernel's center, both as standard deviations of
	// logs (relative spreads) pooled over the two sides, or relative to
	// the center where logs do not apply. Within is NaN where every boot
	// has one sample.
	Within, Between float64
}

// bootSamples are one side's values of one row, grouped by boot.
type bootSamples struct {
	order []string
	by    map[string][]float64
}

func (b *bootSamples) add(boot string, v float64) {
	if b.by == nil {
		b.by = map[string][]float64{}
	}
	if _, ok := b.by[boot]; !ok {
		b.order = append(b.order, boot)
	}
	b.by[boot] = append(b.by[boot], v)
}

func median(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func meanVar(v []float64) (mean, variance float64) {
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

// compareBoots tests old against new with boots as the samples.
func compareBoots(old, new *bootSamples) *BootCmp {
	c := &BootCmp{N1: len(old.order), N2: len(new.order), Log: true}
	var all []float64
	for _, s := range []*bootSamples{old, new} {
		for _, b := range s.order {
			all = append(all, s.by[b]...)
		}
	}
	for _, b := range old.order {
		c.Old = append(c.Old, median(old.by[b]))
	}
	for _, b := range new.order {
		c.New = append(c.New, median(new.by[b]))
	}
	for _, m := range slices.Concat(c.Old, c.New, all) {
		if !(m > 0) {
			c.Log = false
		}
	}
	f := func(x float64) float64 { return x }
	if c.Log {
		f = math.Log
	}
	tr := func(v []float64) []float64 {
		out := make([]float64, len(v))
		for i, x := range v {
			out[i] = f(x)
		}
		return out
	}
	lo, ln := tr(c.Old), tr(c.New)
	mo, vo := meanVar(lo)
	mn, vn := meanVar(ln)
	if c.Log {
		c.OldCenter, c.NewCenter = math.Exp(mo), math.Exp(mn)
	} else {
		c.OldCenter, c.NewCenter = mo, mn
	}
	c.T, c.DF, c.P = welch(lo, ln)

	// Pooled spreads: within boots over every boot, between boots over
	// both sides' boot medians.
	var ssWithin, ssBetween float64
	var dfWithin, dfBetween int
	for _, s := range []*bootSamples{old, new} {
		for _, b := range s.order {
			v := tr(s.by[b])
			_, vr := meanVar(v)
			ssWithin += vr * float64(len(v)-1)
			dfWithin += len(v) - 1
		}
	}
	ssBetween = vo*float64(len(lo)-1) + vn*float64(len(ln)-1)
	dfBetween = len(lo) - 1 + len(ln) - 1
	c.Within = math.NaN()
	if dfWithin > 0 {
		c.Within = math.Sqrt(ssWithin / float64(dfWithin))
	}
	if dfBetween > 0 {
		c.Between = math.Sqrt(ssBetween / float64(dfBetween))
	}
	if !c.Log {
		scale := math.Abs((mo + mn) / 2)
		if scale > 0 {
			c.Within, c.Between = c.Within/scale, c.Between/scale
		} else {
			c.Within, c.Between = 0, 0
		}
	}
	return c
}

// welch is Welch's unequal-variances t-test (go-moremath's) of b against
// a: the t statistic (b minus a), the Welch-Satterthwaite degrees of
// freedom and the two-sided p-value. Where both samples have no spread,
// which the library refuses, the means decide: equal, p is 1; apart, 0.
func welch(a, b []float64) (t, df, p float64) {
	r, err := stats.TwoSampleWelchTTest(stats.Sample{Xs: b}, stats.Sample{Xs: a}, stats.LocationDiffers)
	if errors.Is(err, stats.ErrZeroVariance) {
		ma, mb := stats.Mean(a), stats.Mean(b)
		if ma == mb {
			return 0, math.Inf(1), 1
		}
		return math.Copysign(math.Inf(1), mb-ma), math.Inf(1), 0
	}
	if err != nil { // fewer than 2 values a side: MinBoots rules it out
		return math.NaN(), math.NaN(), 1
	}
	return r.T, r.DoF, r.P
}
