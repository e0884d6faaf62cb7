//go:build linux

package unit

import "math"

// Percentile returns the p-th percentile (0 < p <= 100) of sorted, by
// nearest rank: the smallest value with at least p% of the values at or
// below it. It returns 0 for no values.
func Percentile(sorted []int64, p float64) int64 {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(float64(len(sorted)) * p / 100))
	return sorted[max(0, min(rank, len(sorted))-1)]
}
