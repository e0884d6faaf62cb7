//go:build linux

package abmath

import (
	"math"
	"math/rand/v2"
	"testing"
)

// normalRule draws Stein's procedure on normal boot medians of spread
// sigma, a change delta on B: its p, whether it called B worse past the
// gate, and the boots it planned; -1 boots where out of reach.
func normalRule(rng *rand.Rand, r Rule, sigma, delta float64) (p float64, worse bool, n int) {
	var sum [2]float64
	var ss float64
	for s := range 2 {
		var v []float64
		for range r.N0 {
			v = append(v, sigma*rng.NormFloat64())
		}
		m, _ := MeanVar(v)
		for _, x := range v {
			ss += (x - m) * (x - m)
			sum[s] += x
		}
	}
	s0sq := ss / float64(r.DF())
	n = r.Boots(s0sq)
	if n > r.MaxBoots {
		return math.NaN(), false, -1
	}
	for s := range 2 {
		for range n - r.N0 {
			sum[s] += sigma * rng.NormFloat64()
		}
	}
	diff := (sum[1]-sum[0])/float64(n) + delta
	p = r.P(diff, s0sq, n)
	return p, p <= r.Level && diff > r.Threshold, n
}

// TestRuleNormal: on normal boot medians Stein's test gives p <= level
// at the level's rate whatever the boots it came to, and calls a change
// of the shift in the share Rule.PowerAt predicts, at least Power.
func TestRuleNormal(t *testing.T) {
	draws := 20000
	if testing.Short() {
		draws = 4000
	}
	rng := rand.New(rand.NewPCG(36, 1))
	for _, c := range []struct {
		level, sigma, gate float64
	}{{0.05, 0.01, 0}, {0.05, 0.03, 0}, {0.01, 0.02, 0}, {0.05, 0.02, math.Log1p(0.025)}} {
		r := Rule{Level: c.level, Power: 0.8, Shift: math.Log1p(0.05), Threshold: c.gate, N0: 6, MaxBoots: 1000}
		var null, found int
		var boots float64
		for range draws {
			if p, _, n := normalRule(rng, r, c.sigma, 0); p <= c.level {
				null++
				_ = n
			}
			_, worse, n := normalRule(rng, r, c.sigma, r.Shift)
			if worse {
				found++
			}
			boots += float64(n)
		}
		rate, power := float64(null)/float64(draws), float64(found)/float64(draws)
		pred := r.PowerAt(r.Shift, c.sigma)
		// Three binomial standard errors.
		seA := 3 * math.Sqrt(c.level*(1-c.level)/float64(draws))
		seP := max(3*math.Sqrt(pred*(1-pred)/float64(draws)), 0.005)
		t.Logf("level %g sigma %g gate %.3f: p <= level in %.4f (±%.4f); power %.3f, predicted %.3f (±%.3f); %.1f boots a side, predicted %.1f",
			c.level, c.sigma, c.gate, rate, seA, power, pred, seP, boots/float64(draws), r.expectedBoots(c.sigma))
		if math.Abs(rate-c.level) > seA {
			t.Errorf("level %g sigma %g: A/A rate %.4f, want %g within %.4f", c.level, c.sigma, rate, c.level, seA)
		}
		if math.Abs(power-pred) > seP || pred < 0.8-1e-9 {
			t.Errorf("level %g sigma %g: power %.3f, predicted %.3f (want within %.3f, and at least 0.8)", c.level, c.sigma, power, pred, seP)
		}
	}
}

// TestRuleBoots: the boots formula, and its floor at the pilot.
func TestRuleBoots(t *testing.T) {
	r := Rule{Level: 0.05, Power: 0.8, Shift: 0.05, N0: 6, MaxBoots: 30}
	// df0 = 10: t(0.975) = 2.228, t(0.8) = 0.879, k = 3.107.
	if k := r.k(); math.Abs(k-3.107) > 0.002 {
		t.Errorf("k = %.4f, want 3.107", k)
	}
	s0sq := 0.02 * 0.02
	want := int(math.Ceil(2 * s0sq * 3.107 * 3.107 / (0.05 * 0.05)))
	if got := r.Boots(s0sq); got != max(want, 6) {
		t.Errorf("Boots(%g) = %d, want %d", s0sq, got, want)
	}
	if got := r.Boots(1e-8); got != 6 {
		t.Errorf("a tiny spread: %d boots, want the pilot's 6", got)
	}
	if got := r.MDE(s0sq, r.Boots(s0sq)); got > r.Shift {
		t.Errorf("mde at the planned boots %.4f, want at most the shift %.4f", got, r.Shift)
	}
}

// expectedBoots is the mean boots a side the rule plans for a row of
// spread sigma (counting out-of-reach rows at MaxBoots).
func (r Rule) expectedBoots(sigma float64) float64 {
	df := float64(r.DF())
	var e float64
	for _, v := range grids.get(r.DF()) {
		e += v.w * float64(min(r.Boots(sigma*sigma*v.x/df), r.MaxBoots))
	}
	return e
}
