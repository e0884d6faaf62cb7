//go:build linux

package abstat

import (
	"testing"

	"github.com/kbench/kbench/internal/abstat/sim"
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

// TestFixtureBootIDLine: the fixtures' copy of the boot id line is this
// package's.
func TestFixtureBootIDLine(t *testing.T) {
	if sim.BootIDLine != BootIDLine {
		t.Errorf("sim.BootIDLine %q, abstat.BootIDLine %q", sim.BootIDLine, BootIDLine)
	}
}
