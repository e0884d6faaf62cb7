//go:build linux

package main

import (
	"math"
	"slices"
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
	c.T, c.DF, c.P = welch(mo, vo, len(lo), mn, vn, len(ln))

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

// welch is Welch's unequal-variances t-test of two samples given by their
// means, sample variances and sizes: the t statistic (b minus a), the
// Welch-Satterthwaite degrees of freedom and the two-sided p-value.
func welch(ma, va float64, na int, mb, vb float64, nb int) (t, df, p float64) {
	sa, sb := va/float64(na), vb/float64(nb)
	se2 := sa + sb
	if se2 == 0 {
		if ma == mb {
			return 0, math.Inf(1), 1
		}
		return math.Copysign(math.Inf(1), mb-ma), math.Inf(1), 0
	}
	t = (mb - ma) / math.Sqrt(se2)
	df = se2 * se2 / (sa*sa/float64(na-1) + sb*sb/float64(nb-1))
	return t, df, 2 * studentTail(math.Abs(t), df)
}

// studentTail is P(T > t) for Student's t distribution with df degrees of
// freedom, t >= 0: half the regularized incomplete beta I_x(df/2, 1/2) at
// x = df/(df+t²).
func studentTail(t, df float64) float64 {
	if math.IsInf(df, 1) || df > 1e7 {
		return 0.5 * math.Erfc(t/math.Sqrt2)
	}
	return 0.5 * betaInc(df/2, 0.5, df/(df+t*t))
}

// betaInc is the regularized incomplete beta function I_x(a, b), by its
// continued fraction (modified Lentz), using the symmetry
// I_x(a,b) = 1 - I_{1-x}(b,a) where the fraction converges slowly.
func betaInc(a, b, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a + b)
	lb, _ := math.Lgamma(a)
	lc, _ := math.Lgamma(b)
	front := math.Exp(la - lb - lc + a*math.Log(x) + b*math.Log1p(-x))
	if x > (a+1)/(a+b+2) {
		return 1 - front*betaCF(b, a, 1-x)/b
	}
	return front * betaCF(a, b, x) / a
}

func betaCF(a, b, x float64) float64 {
	// Away from zero, so that no step divides by it.
	nz := func(v float64) float64 {
		if math.Abs(v) < 1e-300 {
			return 1e-300
		}
		return v
	}
	c, d := 1.0, 1/nz(1-(a+b)*x/(a+1))
	h := d
	for m := 1; m <= 300; m++ {
		fm := float64(m)
		// The even step, then the odd one, of the continued fraction.
		for _, num := range []float64{
			fm * (b - fm) * x / ((a + 2*fm - 1) * (a + 2*fm)),
			-(a + fm) * (a + b + fm) * x / ((a + 2*fm) * (a + 2*fm + 1)),
		} {
			d = 1 / nz(1+num*d)
			c = nz(1 + num/c)
			h *= d * c
		}
		if math.Abs(d*c-1) < 1e-15 {
			break
		}
	}
	return h
}
