//go:build linux

package abseries

import (
	"math"

	"github.com/aclements/go-moremath/stats"

	"github.com/kbench/kbench/internal/abmath"
)

// The series' design, as the simulations size it: DefaultBoots and the
// boots docs/comparing.md gives per spread of boot medians come from
// BootsFor, which no run calls (kbab -series boots -boots).

// DesignPower is the power a series' boots per kernel are planned with
// (BootsFor): a step found with 90% power is found at its place, between
// the right two kernels, in at least 80% of series; at 80% power, in
// about 75% (the largest t lands a kernel off in the rest).
const DesignPower = 0.9

// BootsFor is the boots per kernel a series of kernels needs for a step
// of target (a relative change, on logs) in its middle to be found with
// power at the level a row of a family of rows reaches alone
// (alpha/rows), for boot medians of spread sigma (on logs), where the
// kernels' own offsets spread rho·sigma (the most the rule allows for
// at its least): the least n from MinBoots up whose StepPower is at
// least power; 0 where none up to max is.
func BootsFor(target, sigma float64, kernels, rows int, alpha, power, rho float64, max int) int {
	shift := math.Log1p(target)
	for n := MinBoots; n <= max; n++ {
		if StepPower(shift, sigma, float64(n), kernels, kernels/2-1, alpha/float64(rows), rho) >= power && MinP(n*kernels, n*kernels/2) <= alpha/float64(rows) {
			return n
		}
	}
	return 0
}

// StepPower is the chance the offset test (offsetP) at the two-sided
// level finds a step shift after kernel after of kernels with boots
// boot medians each of spread sigma, their own offsets spreading
// rho·sigma: averaged over the allowance the test estimates, max(ρ²σ²,
// the centers' scatter, a χ² of kernels-2 degrees of freedom, less the
// boots' share), where MDEShift holds it at ρ²σ².
func StepPower(shift, sigma, boots float64, kernels, after int, level, rho float64) float64 {
	n1, n2 := boots*float64(after+1), boots*float64(kernels-after-1)
	k := 1/float64(after+1) + 1/float64(kernels-after-1)
	df := boots*float64(kernels) - float64(kernels)
	c := abmath.TQuantile(1-level/(2*float64(kernels-1)), df)
	v, floor, scatter := sigma*sigma*(1/n1+1/n2), rho*rho*sigma*sigma, (rho*rho+1/boots)*sigma*sigma
	se := math.Sqrt(v + floor*k)
	nu := float64(kernels - 2)
	t := stats.TDist{V: df}
	if nu < 1 {
		return t.CDF(shift/se - c)
	}
	// W = χ²ν/ν on a grid to 8, its density unnormalized.
	var p, mass float64
	for w := 0.005; w < 8; w += 0.01 {
		f := math.Exp((nu/2-1)*math.Log(w) - nu*w/2)
		tau2 := max(floor, scatter*w-sigma*sigma/boots)
		p += f * t.CDF(shift/se-c*math.Sqrt(v+tau2*k)/se)
		mass += f
	}
	return p / mass
}
