//go:build linux

package abmath

import (
	"math/rand/v2"
	"testing"
)

// TestPairedRule: Stein's rule on pairs that share a moment's noise
// (the host's, far larger than a boot's own) keeps its level and its
// power: the moment drops out of the differences. Seeded; the rates'
// tolerance is 4 standard errors.
func TestPairedRule(t *testing.T) {
	rng := rand.New(rand.NewPCG(47, 1))
	r := Rule{Level: 0.05, Power: 0.8, N0: 6, MaxBoots: 200, Paired: true}
	const runs, sigma, moment = 4000, 0.02, 0.2
	r.Shift = 0.03
	draw := func(delta float64) (p float64, n int) {
		pair := func() (a, b float64) {
			m := moment * rng.NormFloat64()
			return m + sigma*rng.NormFloat64(), m + delta + sigma*rng.NormFloat64()
		}
		var a, b []float64
		for range r.N0 {
			x, y := pair()
			a, b = append(a, x), append(b, y)
		}
		s0sq := r.S0sq(a, b)
		n = r.Boots(s0sq)
		for len(a) < n {
			x, y := pair()
			a, b = append(a, x), append(b, y)
		}
		var diff float64
		for i := range n {
			diff += b[i] - a[i]
		}
		return r.P(diff/float64(n), s0sq, n), n
	}
	var alarms, power int
	for range runs {
		if p, _ := draw(0); p <= r.Level {
			alarms++
		}
		if p, _ := draw(r.Shift); p <= r.Level {
			power++
		}
	}
	if f := float64(alarms) / runs; f < 0.05-4*0.0034 || f > 0.05+4*0.0034 {
		t.Errorf("false alarms %.4f of %d A/A runs, want 0.05", f, runs)
	}
	if p := float64(power) / runs; p < 0.8-4*0.0063 {
		t.Errorf("power %.4f at the shift, want at least 0.8", p)
	}
	if got := (Rule{N0: 6, Paired: true}).DF(); got != 5 {
		t.Errorf("paired DF %d, want 5", got)
	}
}
