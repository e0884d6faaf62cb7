//go:build linux

package abmath

import (
	"cmp"
	"slices"
)

// BHQ returns Benjamini and Hochberg's q-values of p: q(i) is the
// smallest false discovery rate at which p(i) is called significant,
// min over j with p(j) >= p(i) of m·p(j)/rank(j), at most 1. Calling
// the rows with q <= alpha significant keeps the expected share of false
// ones among them at alpha or below, and, where no row changed at all,
// the chance of calling any at alpha or below.
func BHQ(p []float64) []float64 {
	idx := make([]int, len(p))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(p[a], p[b]) })
	q := make([]float64, len(p))
	m, least := float64(len(p)), 1.0
	for k := len(idx) - 1; k >= 0; k-- {
		i := idx[k]
		least = min(least, p[i]*m/float64(k+1))
		q[i] = least
	}
	return q
}
