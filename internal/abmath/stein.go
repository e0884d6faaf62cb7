//go:build linux

package abmath

import (
	"math"

	"github.com/aclements/go-moremath/stats"
)

// Rule is Stein's two-stage test of one row (C. Stein, Ann. Math.
// Statist. 16, 1945) on its boot medians on its Scale: s0², the pooled
// variance of a pilot of N0 boots a side, alone fixes the row's boots n
// (Boots) and the statistic T = (mean of B's n - mean of A's n) / (s0
// √(2/n)) on df0 = 2(N0-1), so that its false-alarm rate is Level and
// its power at Shift at least Power at every spread (docs/comparing.md,
// "kbab -target").
type Rule struct {
	// Level is the two-sided level (alpha over the family's rows where
	// the report judges by q), Power the chance of passing at Shift.
	Level, Power float64
	// Shift is the change to detect and Threshold the smallest |change|
	// the report calls one, both on the row's scale.
	Shift, Threshold float64
	// N0 is the pilot's boots a side, MaxBoots the most a row may have.
	N0, MaxBoots int
	// Paired is the rule of pairs of an A and a B boot at once (a duet):
	// s0² is that of the pairs' differences, on N0-1 degrees of freedom.
	Paired bool
}

// DF is the pilot's degrees of freedom, 2(N0-1) (N0-1 Paired).
func (r Rule) DF() int {
	if r.Paired {
		return r.N0 - 1
	}
	return 2 * (r.N0 - 1)
}

// k is t(1-Level/2, df0) + t(Power, df0).
func (r Rule) k() float64 {
	df := float64(r.DF())
	return TQuantile(1-r.Level/2, df) + TQuantile(r.Power, df)
}

// Boots is the boots a side the pilot's variance s0sq asks for: at
// least N0. It may pass MaxBoots (then the row is out of reach).
func (r Rule) Boots(s0sq float64) int {
	if !(s0sq > 0) {
		return r.N0
	}
	k := r.k()
	n := math.Ceil(2 * s0sq * k * k / (r.Shift * r.Shift))
	if n > 1e6 || math.IsNaN(n) {
		return math.MaxInt32
	}
	return max(r.N0, int(n))
}

// P is the two-sided p of a difference of means diff (B - A) over n
// boots a side with the pilot's variance s0sq: T = diff / (s0 √(2/n))
// against Student's t on df0; ±Inf, p 0, where s0 is 0 and diff not;
// NaN where there is no statistic.
func (r Rule) P(diff, s0sq float64, n int) float64 {
	se := math.Sqrt(s0sq * 2 / float64(n))
	t := math.NaN()
	switch {
	case math.IsNaN(diff) || math.IsNaN(se):
	case se > 0:
		t = diff / se
	case diff == 0:
		t = 0
	default:
		return 0
	}
	if math.IsInf(t, 0) {
		return 0
	}
	return 2 * (1 - stats.TDist{V: float64(r.DF())}.CDF(math.Abs(t)))
}

// Half is the half-width of the change's interval at confidence conf:
// t((1+conf)/2, df0) s0 √(2/n), on the scale.
func (r Rule) Half(s0sq float64, n int, conf float64) float64 {
	return TQuantile((1+conf)/2, float64(r.DF())) * math.Sqrt(s0sq*2/float64(n))
}

// MDE is the shift, on the scale, that n boots a side detect with the
// rule's power: k s0 √(2/n), the Shift that would have planned n.
func (r Rule) MDE(s0sq float64, n int) float64 {
	return r.k() * math.Sqrt(s0sq*2/float64(n))
}

// PowerAt is the chance that the procedure calls a row whose boot
// medians are normal with standard deviation sigma changed in the
// direction of delta (> 0) and past the Threshold, the row not out of
// reach: an integral over the pilot's variance (s0²/σ² is chi-squared on
// df0 over df0), given which n is fixed and the mean difference normal
// with variance 2σ²/n.
func (r Rule) PowerAt(delta, sigma float64) float64 {
	if !(sigma > 0) {
		if delta > r.Threshold {
			return 1
		}
		return 0
	}
	df := float64(r.DF())
	crit := TQuantile(1-r.Level/2, df)
	var p float64
	for _, v := range grids.get(r.DF()) {
		s0sq := sigma * sigma * v.x / df
		n := r.Boots(s0sq)
		if n > r.MaxBoots {
			continue
		}
		se := sigma * math.Sqrt(2/float64(n))
		cut := max(r.Threshold, crit*math.Sqrt(s0sq*2/float64(n)))
		p += v.w * normal.CDF((delta-cut)/se)
	}
	return p
}

type point struct{ x, w float64 }

// grids are midpoint grids of the chi-squared distribution on df: its
// points and their probabilities, summing to 1 within 1e-9.
var grids = memo[int, []point]{f: func(df int) []point {
	f := float64(df)
	lg, _ := math.Lgamma(f / 2)
	hi := f + 40*math.Sqrt(2*f) + 40
	const steps = 4000
	h := hi / steps
	var g []point
	var sum float64
	for i := range steps {
		x := (float64(i) + 0.5) * h
		w := h * math.Exp((f/2-1)*math.Log(x)-x/2-f/2*math.Ln2-lg)
		g = append(g, point{x, w})
		sum += w
	}
	for i := range g {
		g[i].w /= sum
	}
	return g
}}

// S0sq is the rule's s0² from A's and B's pilot boot medians a, b on
// the scale: their pooled variance on DF, or for a Paired rule half the
// sample variance of the pairs' differences b[i]-a[i], so that s0 √(2/n)
// is the paired t-test's standard error and every formula of Rule holds
// for pairs on DF n-1.
func (r Rule) S0sq(a, b []float64) float64 {
	if r.Paired {
		d := make([]float64, min(len(a), len(b)))
		for i := range d {
			d[i] = b[i] - a[i]
		}
		_, v := MeanVar(d)
		return v / 2
	}
	var ss float64
	for _, v := range [][]float64{a, b} {
		m, _ := MeanVar(v)
		for _, x := range v {
			ss += (x - m) * (x - m)
		}
	}
	return ss / float64(r.DF())
}
