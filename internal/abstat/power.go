//go:build linux

package abstat

import (
	"slices"

	"github.com/kbench/kbench/internal/abmath"
)

// Power is what a compared row could have detected (docs/kbcompare.md
// gives the formulas): the relative change detectable with
// abmath.TargetPower (+Inf where the test cannot reach alpha), and the
// boots or samples a side that would detect the threshold (0: more than
// abmath.MaxNeed).
type Power struct {
	Test string // "welch" (boots as samples), "stein" (a design's), or "utest" (per sample)
	MDE  float64
	Need int
}

// NeedUnit names what Need counts.
func (p *Power) NeedUnit() string {
	if p.Test == "welch" || p.Test == "stein" {
		return "boots"
	}
	return "samples"
}

// bootPower is the power of a comparison with boots as samples.
func bootPower(b *bootCmp, sc abmath.Scale, threshold, alpha float64) *Power {
	c := sc.To(b.sides[0].Center)
	p := &Power{Test: "welch"}
	p.MDE = sc.Change(abmath.WelchShift(b.between, len(b.med[0]), len(b.med[1]), alpha), c)
	p.Need = abmath.Need(sc.Shift(threshold, c), MinBoots, func(n int) float64 { return abmath.WelchShift(b.between, n, n, alpha) })
	return p
}

// samplePower is the power of a per-sample comparison of old and new on
// the row's scale sc.
func samplePower(old, new []float64, sc abmath.Scale, threshold, alpha float64) *Power {
	lo, ln := sc.ToAll(old), sc.ToAll(new)
	n1, n2 := len(lo), len(ln)
	var resid []float64 // each value less its side's median
	for _, side := range [][]float64{lo, ln} {
		m := abmath.Median(side)
		for _, x := range side {
			resid = append(resid, x-m)
		}
	}
	slices.Sort(resid)
	c := sc.To(abmath.Median(slices.Concat(old, new)))
	p := &Power{Test: "utest"}
	p.MDE = sc.Change(abmath.UShift(resid, n1, n2, alpha), c)
	p.Need = abmath.Need(sc.Shift(threshold, c), 2, func(n int) float64 { return abmath.UShift(resid, n, n, alpha) })
	return p
}
