//go:build linux

package abstat

import (
	"slices"
	"testing"
)

var defaults = Options{Threshold: 0.05, Alpha: 0.05}

// rowOf returns the row name in unit, failing the test where r has none.
func rowOf(t *testing.T, r *Report, unit, name string) *Row {
	t.Helper()
	row := r.Find("", unit, name)
	if row == nil {
		t.Fatalf("no row %s in unit %s", name, unit)
	}
	return row
}

// rows counts r's rows: the benchmarks, each in its Primary unit.
func rows(r *Report) int {
	n := 0
	for range r.Primaries() {
		n++
	}
	return n
}

// sorted is every sample of a side of row, sorted.
func sorted(row *Row, side int) []float64 {
	return slices.Sorted(slices.Values(row.Samples[side].all()))
}
