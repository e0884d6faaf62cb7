//go:build linux

package sim

import (
	"path"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/registry"
)

// TestSuiteRowsRegistered: every row of the whole-suite fixture is a row
// of internal/registry, with ten results and a within-boot spread. The
// fixture need not hold every registered row: the simulations draw from
// the rows it has, and a new benchmark does not wait for a suite rerun.
func TestSuiteRowsRegistered(t *testing.T) {
	registered := map[string]bool{}
	for _, b := range registry.Benchmarks {
		for _, r := range b.Rows {
			for _, n := range registry.Expand(r.Name) {
				registered[path.Base(b.Package)+" "+n] = true
			}
		}
	}
	s := LoadSuite(t)
	if len(s.Rows) == 0 {
		t.Fatalf("no rows in %s", SuiteFile)
	}
	for _, r := range s.Rows {
		name := path.Base(r.Pkg) + " " + strings.TrimRight(strings.TrimRight(r.Name, "0123456789"), "-")
		if !registered[name] {
			t.Errorf("%s: in %s but not in internal/registry", r.Key(), SuiteFile)
		}
		if len(r.Results) != 10 || !(r.Within > 0) {
			t.Errorf("%s: %d results, within-boot spread %g; want 10 and a spread", r.Key(), len(r.Results), r.Within)
		}
	}
	t.Logf("%d of %d registered rows in %s", len(s.Rows), len(registered), SuiteFile)
}
