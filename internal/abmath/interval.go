//go:build linux

package abmath

import (
	"math"
	"slices"

	"github.com/aclements/go-moremath/stats"
)

// Confidence is benchstat's confidence level for ranges and intervals.
const Confidence = 0.95

// ShiftInterval is the Hodges-Lehmann Confidence interval of the shift
// from x to y that goes with the U-test: order statistics of the n1·n2
// differences y-x (hlRank); ±Inf where the samples are too few.
func ShiftInterval(x, y []float64) (lo, hi float64) {
	var diffs []float64
	for _, a := range x {
		for _, b := range y {
			diffs = append(diffs, b-a)
		}
	}
	slices.Sort(diffs)
	k := hlRank(len(x), len(y))
	if k < 1 {
		return math.Inf(-1), math.Inf(1)
	}
	return diffs[k-1], diffs[len(diffs)-k]
}

// hlRank is the rank k (1-based) of the Hodges-Lehmann interval's lower
// end among the sorted differences: one more than the largest c with
// P(U <= c) <= (1-Confidence)/2, by U's exact law up to 20 samples a
// side (go-moremath's, slow beyond), its normal approximation beyond.
func hlRank(n1, n2 int) int {
	tail := (1 - Confidence) / 2
	if n1 > 20 || n2 > 20 {
		f1, f2 := float64(n1), float64(n2)
		return int(math.Floor(f1*f2/2 - normal.InvCDF(1-tail)*math.Sqrt(f1*f2*(f1+f2+1)/12)))
	}
	u := stats.UDist{N1: n1, N2: n2}
	c := -1
	for c+1 <= n1*n2 && u.CDF(float64(c+1)) <= tail {
		c++
	}
	return c + 1
}
