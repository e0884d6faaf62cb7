//go:build linux

package abmath

// PairedS0sq is the s0² of a paired Rule from pairs a[i], b[i], each
// booted at once, on the scale: half the sample variance of b[i]-a[i],
// so that the rule's standard error s0 √(2/n) is the paired t-test's,
// sd(b-a)/√n, and every formula of Rule holds for pairs on DF n-1. What
// the host does to both boots of a pair drops out of the differences.
func PairedS0sq(a, b []float64) float64 {
	d := make([]float64, min(len(a), len(b)))
	for i := range d {
		d[i] = b[i] - a[i]
	}
	_, v := MeanVar(d)
	return v / 2
}
