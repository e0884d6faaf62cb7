//go:build linux

package abmath

import (
	"errors"
	"math"
	"sync"

	"github.com/aclements/go-moremath/stats"
)

// Welch is Welch's t-test (go-moremath's) of b against a: t (b minus
// a), the degrees of freedom and the two-sided p. Where neither sample
// has a spread, which the library refuses, the means decide (p 1 where
// equal, else 0) on n1+n2-2 degrees of freedom.
func Welch(a, b []float64) (t, df, p float64) {
	r, err := stats.TwoSampleWelchTTest(stats.Sample{Xs: b}, stats.Sample{Xs: a}, stats.LocationDiffers)
	if errors.Is(err, stats.ErrZeroVariance) {
		df = float64(len(a) + len(b) - 2)
		ma, mb := stats.Mean(a), stats.Mean(b)
		if ma == mb {
			return 0, df, 1
		}
		return math.Copysign(math.Inf(1), mb-ma), df, 0
	}
	if err != nil { // fewer than 2 values a side
		return math.NaN(), math.NaN(), 1
	}
	return r.T, r.DoF, r.P
}

// TQuantile is Student's t distribution's p quantile on df degrees of
// freedom, cached; the normal's from df 1e6 on, where go-moremath's TDist
// panics ("betainc: a or b too big"). NaN where df is not a positive
// number.
func TQuantile(p, df float64) float64 { return tQuantiles.get([2]float64{p, df}) }

var tQuantiles = memo[[2]float64, float64]{f: func(k [2]float64) float64 { return tQuantile(k[0], k[1]) }}

// memo caches f's values, for concurrent use: a design and a report ask
// for the same few quantiles, noncentralities and grids again and again.
type memo[K comparable, V any] struct {
	m sync.Map
	f func(K) V
}

func (c *memo[K, V]) get(k K) V {
	if v, ok := c.m.Load(k); ok {
		return v.(V)
	}
	v := c.f(k)
	c.m.Store(k, v)
	return v
}

func tQuantile(p, df float64) float64 {
	switch {
	case !(df > 0):
		return math.NaN()
	case df >= 1e6:
		return normal.InvCDF(p)
	case p == 0.5:
		return 0
	case p < 0.5:
		return -tQuantile(1-p, df)
	}
	// Newton's method from the normal quantile (the t CDF is concave
	// above 0, so the steps rise to the root): a few CDF evaluations
	// instead of InvCDF's fifty bisections.
	t := stats.TDist{V: df}
	x := normal.InvCDF(p)
	for range 100 {
		step := (t.CDF(x) - p) / t.PDF(x)
		x -= step
		if math.Abs(step) <= 1e-12*math.Max(1, math.Abs(x)) {
			return x
		}
	}
	return stats.InvCDF(t)(p)
}

var normal = stats.NormalDist{Mu: 0, Sigma: 1}
