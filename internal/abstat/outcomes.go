//go:build linux

package abstat

import (
	"fmt"
	"strings"
)

// outcomes marks the rows that failed, or that one side lacks because it
// failed or skipped them there, and lists the failures no row shows.
// It runs before Judge, on which rows each side holds.
func (r *Report) outcomes(files []*File) {
	// Rows by package and by go test's name of them (full name, and
	// without the -GOMAXPROCS suffix), as sameBenchmark matches them.
	index := map[[2]string][]*Row{}
	for _, t := range r.Tables {
		for _, row := range t.Rows {
			k := [2]string{t.Pkg, row.Name}
			index[k] = append(index[k], row)
			if s := procsSuffix.ReplaceAllString(row.Name, ""); s != row.Name {
				k := [2]string{t.Pkg, s}
				index[k] = append(index[k], row)
			}
		}
	}
	find := func(pkg, testName string) []*Row {
		name, ok := strings.CutPrefix(testName, "Benchmark")
		if !ok {
			return nil
		}
		return index[[2]string{pkg, name}]
	}
	sides := [2]string{"old", "new"}
	for side, f := range files {
		for _, o := range leaves(f.lines.failed) {
			rows := find(o.pkg, o.name)
			for _, row := range rows {
				row.fail(Failed, fmt.Sprintf("--- FAIL in %s (%s:%d)", sides[side], f.Path, o.line))
			}
			if len(rows) == 0 {
				r.Problems = append(r.Problems, Problem{sides[side], o.pkg, o.name, fmt.Sprintf("--- FAIL, no results (%s:%d)", f.Path, o.line)})
			}
		}
		failedPkg := map[string]outcome{}
		for _, o := range f.lines.pkgFail {
			r.Problems = append(r.Problems, Problem{sides[side], o.pkg, o.name, fmt.Sprintf("the test binary failed (%s:%d)", f.Path, o.line)})
			if _, ok := failedPkg[o.pkg]; !ok {
				failedPkg[o.pkg] = o
			}
		}
		// A row the other side has and this side lacks: did this side
		// skip it, or did its package fail?
		lacks := func(row *Row) bool { return row.Samples[side] == nil && row.Samples[1-side] != nil }
		for _, o := range f.lines.skipped {
			for _, row := range find(o.pkg, o.name) {
				if lacks(row) {
					row.fail(Skipped, fmt.Sprintf("--- SKIP in %s (%s:%d)", sides[side], f.Path, o.line))
				}
			}
		}
		for _, t := range r.Tables {
			if o, ok := failedPkg[t.Pkg]; ok {
				for _, row := range t.Rows {
					if lacks(row) {
						row.fail(Failed, fmt.Sprintf("missing from %s, whose test binary failed (%s:%d)", sides[side], f.Path, o.line))
					}
				}
			}
		}
	}
}

// fail sets a Failed or Skipped verdict; Failed wins over Skipped.
func (row *Row) fail(v Verdict, why string) {
	if row.Verdict == Failed && v == Skipped {
		return
	}
	if row.Verdict != v {
		row.Why = why
	}
	row.Verdict = v
}
