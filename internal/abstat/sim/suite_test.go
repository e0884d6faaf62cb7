//go:build linux

package sim

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSuiteCoversBenchmarks: the whole-suite fixture holds every row of
// .ci/benchmarks.txt but those it marks as allowed to skip ("? "), ten
// results each, and no row the list does not name: its row count follows
// the list (testdata/README.md says which of the "? " rows ran).
func TestSuiteCoversBenchmarks(t *testing.T) {
	list, err := os.ReadFile(filepath.Join("..", "..", "..", ".ci", "benchmarks.txt"))
	if err != nil {
		t.Skipf("no .ci/benchmarks.txt above the package (%v): the fixture is checked on the source tree", err)
	}
	s := LoadSuite(t)
	// name is a row's list entry: package and name without -GOMAXPROCS.
	name := func(r SuiteRow) string {
		return r.Pkg[strings.LastIndex(r.Pkg, "/")+1:] + " " + strings.TrimRight(strings.TrimRight(r.Name, "0123456789"), "-")
	}
	listed := map[string]bool{}
	for _, l := range strings.Split(string(list), "\n") {
		f := strings.Fields(l)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		may := f[0] == "?"
		if may {
			f = f[1:]
		}
		if len(f) != 2 {
			t.Errorf(".ci/benchmarks.txt: %q is not \"[? ]package Name\"", l)
			continue
		}
		listed[f[0]+" "+f[1]] = true
		if may {
			continue
		}
		i := slices.IndexFunc(s.Rows, func(r SuiteRow) bool { return name(r) == f[0]+" "+f[1] })
		if i < 0 {
			t.Errorf("%s %s: not in %s", f[0], f[1], SuiteFile)
			continue
		}
		if r := s.Rows[i]; len(r.Results) != 10 || !(r.Within > 0) {
			t.Errorf("%s: %d results, within-boot spread %g; want 10 and a spread", r.Key(), len(r.Results), r.Within)
		}
	}
	for _, r := range s.Rows {
		if !listed[name(r)] {
			t.Errorf("%s: in %s but not in .ci/benchmarks.txt", r.Key(), SuiteFile)
		}
	}
	if len(s.Rows) == 0 || len(s.Rows) > len(listed) {
		t.Errorf("%d rows in %s for %d listed", len(s.Rows), SuiteFile, len(listed))
	}
}
