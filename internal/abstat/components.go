//go:build linux

package abstat

import (
	"github.com/kbench/kbench/internal/abmath"
	"math"
	"slices"
)

// Components are a row's variance components, on its Scale: the two
// levels of the experiment (Kalibera and Jones, "Rigorous benchmarking
// in reasonable time", ISMM 2013), estimated from the boots both sides
// hold, each side's boots around their own side's center, so that the
// difference between the sides enters no component.
type Components struct {
	// Boots counts the boots the estimates pool, Count the mean samples
	// per boot.
	Boots int
	Count float64
	// Within is the variance of a sample inside a boot: (1.4826 × the
	// median absolute deviation of every sample from its boot's median)²,
	// robust to the odd slow sample as the median of a boot is. NaN
	// where every boot has one sample.
	Within float64
	// Centers is the variance of the boot medians around their side's
	// mean (pooled over the sides), NaN with fewer than two boots a side
	// on every side.
	Centers float64
	// Between is the boot effect: Centers less the sampling error of a
	// boot's median at its count (Sampling), at least 0; 0 where Centers
	// is NaN (NoBetween).
	Between float64
	// NoBetween says the boot effect could not be estimated: no side
	// holds two boots.
	NoBetween bool
	// resid are the samples' distances from their boots' medians, all
	// boots pooled, sorted, thinned to at most residQuantiles values:
	// the within-boot distribution a boot's median is drawn from.
	resid []float64
	// sampling caches Sampling by count.
	sampling map[int]float64
}

// residQuantiles bounds the pooled residuals Sampling works on.
const residQuantiles = 51

// CenterVar is the variance of a boot's median with count samples: the
// boot effect plus the median's sampling error.
func (c *Components) CenterVar(count int) float64 {
	return c.Between + c.Sampling(count)
}

// Sampling is the variance of the median of count samples drawn from
// the pooled within-boot residuals, exact for that distribution (the
// binomial law of order statistics): where a row's samples fall in two
// clusters its median jumps between them, and this shows it where a
// normal model (π/2 × Within / count) would not.
func (c *Components) Sampling(count int) float64 {
	if v, ok := c.sampling[count]; ok {
		return v
	}
	if c.sampling == nil {
		c.sampling = map[int]float64{}
	}
	v := medianVar(c.resid, count)
	c.sampling[count] = v
	return v
}

// ComponentsOf estimates the components from each side's samples by
// boot (a nil side is absent), on sc.
func ComponentsOf(sc abmath.Scale, sides ...*BootSamples) Components {
	var c Components
	var dev []float64
	var ssCenters float64
	var dfCenters, samples int
	var counts []int
	for _, s := range sides {
		if s == nil {
			continue
		}
		c.Boots += s.Boots()
		meds := sc.ToAll(s.Medians())
		for i, v := range s.Values {
			samples += len(v)
			counts = append(counts, len(v))
			dropped := false
			for _, x := range sc.ToAll(v) {
				// An odd count's median is one of its samples: its
				// residual of 0 says nothing of the spread.
				if x == meds[i] && len(v)%2 == 1 && !dropped {
					dropped = true
					continue
				}
				c.resid = append(c.resid, x-meds[i])
				dev = append(dev, math.Abs(x-meds[i]))
			}
		}
		if len(meds) >= 2 {
			_, v := abmath.MeanVar(meds)
			ssCenters += v * float64(len(meds)-1)
			dfCenters += len(meds) - 1
		}
	}
	if c.Boots > 0 {
		c.Count = float64(samples) / float64(c.Boots)
	}
	c.Within = math.NaN()
	if len(dev) > 0 {
		sd := 1.4826 * abmath.Median(dev)
		c.Within = sd * sd
	}
	slices.Sort(c.resid)
	if n := len(c.resid); n > residQuantiles {
		q := make([]float64, residQuantiles)
		for i := range q {
			q[i] = c.resid[(2*i+1)*n/(2*residQuantiles)]
		}
		c.resid = q
	}
	c.Centers = math.NaN()
	if dfCenters == 0 {
		c.NoBetween = true
		return c
	}
	c.Centers = ssCenters / float64(dfCenters)
	var sampling float64
	for _, n := range counts {
		sampling += c.Sampling(n)
	}
	c.Between = max(c.Centers-sampling/float64(len(counts)), 0)
	return c
}

// medianVar is the variance of the median of n draws with replacement
// from the sorted values s: the k-th smallest of n draws is at most
// s[j] with the chance that at least k of the n draws are, a binomial
// tail at F = (j+1)/len(s). For an even n the median is the mean of the
// two middle order statistics, whose joint law medianVarEven sums.
func medianVar(s []float64, n int) float64 {
	if n < 1 || len(s) < 2 {
		return 0
	}
	if n%2 == 0 {
		return medianVarEven(s, n)
	}
	k := (n + 1) / 2
	var mean, sq, prev float64
	for j, x := range s {
		cdf := binomAtLeast(n, k, float64(j+1)/float64(len(s)))
		p := cdf - prev
		prev = cdf
		mean += p * x
		sq += p * x * x
	}
	return max(sq-mean*mean, 0)
}

// medianVarEven is the variance of (X(k) + X(k+1))/2, k = n/2, the
// median of an even n draws from the sorted values s, each of chance
// 1/len(s), from the joint law of the two middle order statistics over
// the distinct values v_1 < ... < v_d with cumulative chances F_i: for
// i < j, exactly k draws at most v_i, one of them v_i, none between, one
// v_j,
//
//	P(v_i, v_j) = C(n,k) (F_i^k - F_{i-1}^k) ((1-F_{j-1})^(n-k) - (1-F_j)^(n-k))
//
// and for both at v_i, fewer than k draws below v_i and more than k at
// most v_i. (The mean of the two order statistics' variances, which
// this replaced, ignores their correlation: 1.21 times the variance at
// n = 4 for normal residuals.)
func medianVarEven(s []float64, n int) float64 {
	var v, F []float64 // distinct values and cumulative chances
	for j, x := range s {
		if len(v) > 0 && v[len(v)-1] == x {
			F[len(F)-1] = float64(j+1) / float64(len(s))
			continue
		}
		v, F = append(v, x), append(F, float64(j+1)/float64(len(s)))
	}
	k := n / 2
	lc, _ := math.Lgamma(float64(n + 1))
	la, _ := math.Lgamma(float64(k + 1))
	choose := math.Exp(lc - 2*la)  // C(n, k), n = 2k
	below := func(i int) float64 { // F_{i-1}
		if i == 0 {
			return 0
		}
		return F[i-1]
	}
	pow := func(x float64, e int) float64 { return math.Pow(max(x, 0), float64(e)) }
	var mean, sq float64
	add := func(p, m float64) {
		mean += p * m
		sq += p * m * m
	}
	for i := range v {
		fi, fb := F[i], below(i)
		// Both middle draws at v_i.
		add(1-binomAtLeast(n, k, fb)-(1-binomAtLeast(n, k+1, fi))+choose*pow(fb, k)*pow(1-fi, n-k), v[i])
		lo := choose * (pow(fi, k) - pow(fb, k))
		for j := i + 1; j < len(v); j++ {
			add(lo*(pow(1-below(j), n-k)-pow(1-F[j], n-k)), (v[i]+v[j])/2)
		}
	}
	return max(sq-mean*mean, 0)
}

// binomAtLeast is P(Bin(n, p) >= k), summed term by term (n is a
// -count: small).
func binomAtLeast(n, k int, p float64) float64 {
	if p >= 1 {
		return 1
	}
	// P(X = i) from P(X = 0) = (1-p)^n by the ratio of successive terms.
	term, r := math.Pow(1-p, float64(n)), p/(1-p)
	var sum float64
	for i := 0; i <= n; i++ {
		if i >= k {
			sum += term
		}
		term *= float64(n-i) / float64(i+1) * r
	}
	return min(sum, 1)
}

// SampleCost is the timed seconds of one sample of a row: the median
// over its results of iterations × sec/op, from each side's samples in
// sec/op; go test's ramp to b.N and a row's setup are on top of it
// (Cost.PerTimed). 0 where no iteration count is known.
func SampleCost(secOp ...*BootSamples) float64 {
	var t []float64
	for _, s := range secOp {
		if s == nil {
			continue
		}
		for i, v := range s.Values {
			for j, x := range v {
				if n := s.Iters[i][j]; n > 0 {
					t = append(t, float64(n)*x)
				}
			}
		}
	}
	if len(t) == 0 {
		return 0
	}
	return abmath.Median(t)
}
