//go:build linux

package main

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// resultFile writes go test -bench output: a fingerprint, unit metadata,
// the usual configuration lines and one line per sample.
type resultFile struct {
	fingerprint map[string]string // key -> value, in sorted key order
	units       []string          // "Unit x better=higher" lines
	pkg         string
	lines       []string // benchmark lines, already formatted
	extra       string   // appended verbatim
}

func (f resultFile) write(t *testing.T, name string) string {
	t.Helper()
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(f.fingerprint)) {
		fmt.Fprintf(&b, "# kbench %s: %s\n", k, f.fingerprint[k])
	}
	for _, u := range f.units {
		b.WriteString(u + "\n")
	}
	pkg := f.pkg
	if pkg == "" {
		pkg = "github.com/kbench/kbench/fakebench"
	}
	fmt.Fprintf(&b, "goos: linux\ngoarch: amd64\npkg: %s\ncpu: Test CPU\n", pkg)
	for _, l := range f.lines {
		b.WriteString(l + "\n")
	}
	b.WriteString(f.extra)
	b.WriteString("PASS\nok  \t" + pkg + "\t1.0s\n")
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// samples formats one benchmark line per value; unitVals pairs a unit
// with a function of the sample index.
func samples(name string, n int, unitVals ...any) []string {
	var lines []string
	for i := range n {
		l := fmt.Sprintf("Benchmark%s \t 1000", name)
		for j := 0; j < len(unitVals); j += 2 {
			l += fmt.Sprintf("\t%v %s", unitVals[j+1].(func(int) float64)(i), unitVals[j].(string))
		}
		lines = append(lines, l)
	}
	return lines
}

// around returns values base*(1 + spread*k) for k cycling over a fixed,
// symmetric pattern: a known median (base) and a known spread.
func around(base, spread float64) func(int) float64 {
	pattern := []float64{0, -1, 1, -0.5, 0.5, -0.25, 0.25, -0.75, 0.75, 0}
	return func(i int) float64 { return base * (1 + spread*pattern[i%len(pattern)]) }
}
