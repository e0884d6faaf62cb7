//go:build linux

package main

import (
	"math"
	"testing"

	"github.com/kbench/kbench/internal/abmath"
	"github.com/kbench/kbench/internal/abplan"
	"github.com/kbench/kbench/internal/abstat"
)

// TestPairedTestInput: the fixed duet's test on rows whose pairs are
// missing, unequal, single, constant or non-finite gives no verdict-worthy
// p it cannot support: undecided with a reason where the pairs are not
// there, a finite p and mde where they are, and never a NaN called decided.
func TestPairedTestInput(t *testing.T) {
	side := func(meds ...float64) *abstat.BootSamples {
		b := &abstat.BootSamples{}
		for i, m := range meds {
			b.Add(string(rune('a'+i)), m, 1)
		}
		return b
	}
	log := abmath.Scale{Log: true}
	for _, c := range []struct {
		name     string
		old, new *abstat.BootSamples
		decided  bool
		smallP   bool // p <= alpha expected
	}{
		{"old missing", nil, side(1, 2, 3), false, false},
		{"new missing", side(1, 2, 3), nil, false, false},
		{"unequal pairs", side(1, 1.1, 1.2), side(1, 1.1), false, false},
		{"one pair", side(1), side(1.1), false, false},
		{"no pairs", side(), side(), false, false},
		{"equal ratios, no change", side(1, 2, 3), side(1, 2, 3), true, false},
		{"noisy A/A", side(1, 1.2, 0.9, 1.1), side(1.05, 1.1, 0.95, 1.0), true, false},
		{"every pair 10% worse", side(1, 1.2, 0.9, 1.1), side(1.1, 1.31, 1.0, 1.2), true, true},
		{"a NaN median", side(1, math.NaN(), 1.1), side(1, 1.1, 1.2), true, false},
	} {
		row := &abstat.Row{Scale: log, Samples: []*abstat.BootSamples{c.old, c.new}}
		res, ok := abplan.Paired(0.05)(nil, row)
		if !ok {
			t.Errorf("%s: the duet declined the row", c.name)
			continue
		}
		if !c.decided {
			if res.Decided || res.Why == "" || !math.IsInf(res.MDE, 1) {
				t.Errorf("%s: decided %v, why %q, mde %v; want undecided with a reason and no mde", c.name, res.Decided, res.Why, res.MDE)
			}
			continue
		}
		if c.name == "a NaN median" {
			if res.Decided && res.P <= 0.05 {
				t.Errorf("%s: p %v would give a verdict from a NaN", c.name, res.P)
			}
			continue
		}
		if !res.Decided || math.IsNaN(res.P) || res.P < 0 || res.P > 1 {
			t.Errorf("%s: decided %v, p %v; want decided with p in [0,1]", c.name, res.Decided, res.P)
		}
		if got := res.P <= 0.05; got != c.smallP {
			t.Errorf("%s: p %v, want p <= 0.05 %v", c.name, res.P, c.smallP)
		}
	}
}
