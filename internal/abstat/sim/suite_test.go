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
// results each.
func TestSuiteCoversBenchmarks(t *testing.T) {
	list, err := os.ReadFile(filepath.Join("..", "..", "..", ".ci", "benchmarks.txt"))
	if err != nil {
		t.Skipf("no .ci/benchmarks.txt above the package (%v): the fixture is checked on the source tree", err)
	}
	s := LoadSuite(t)
	for _, l := range strings.Split(string(list), "\n") {
		f := strings.Fields(l)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") || f[0] == "?" {
			continue
		}
		i := slices.IndexFunc(s.Rows, func(r SuiteRow) bool {
			return strings.HasSuffix(r.Pkg, "/"+f[0]) && strings.TrimRight(strings.TrimRight(r.Name, "0123456789"), "-") == f[1]
		})
		if i < 0 {
			t.Errorf("%s %s: not in %s", f[0], f[1], SuiteFile)
			continue
		}
		if r := s.Rows[i]; len(r.Results) != 10 || !(r.Within > 0) {
			t.Errorf("%s: %d results, within-boot spread %g; want 10 and a spread", r.Key(), len(r.Results), r.Within)
		}
	}
	if len(s.Rows) != 70 {
		t.Errorf("%d rows, want 70", len(s.Rows))
	}
}
