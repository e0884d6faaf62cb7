//go:build linux

package abstat

import (
	"sort"

	"github.com/kbench/kbench/internal/abmath"
)

// Power is what a row compared with boots as samples could have
// detected (docs/kbcompare.md gives the formulas): the relative change
// detectable with abmath.TargetPower (+Inf where the test cannot reach
// alpha), and the boots a side that would detect the threshold (0: more
// than abmath.MaxNeed). Per sample there is none: a boot's samples
// share its layout, so their spread does not say what change a test of
// the kernels could see.
type Power struct {
	Test string // "welch" (boots as samples) or "stein" (a design's)
	MDE  float64
	Need int
}

// bootPower is the power of a comparison with boots as samples.
func bootPower(b *bootCmp, sc abmath.Scale, threshold, alpha float64) *Power {
	c := sc.To(b.sides[0].Center)
	p := &Power{Test: "welch"}
	p.MDE = sc.Change(abmath.WelchShift(b.between, len(b.med[0]), len(b.med[1]), alpha), c)
	// The fewest boots a side from MinBoots whose shift reaches the
	// threshold's (it falls with n).
	shift, target := func(n int) float64 { return abmath.WelchShift(b.between, n, n, alpha) }, sc.Shift(threshold, c)
	if shift(abmath.MaxNeed) <= target {
		p.Need = MinBoots + sort.Search(abmath.MaxNeed-MinBoots, func(i int) bool { return shift(MinBoots+i) <= target })
	}
	return p
}
