//go:build linux

package abstat

import (
	"path"
	"slices"
	"strings"

	"github.com/kbench/kbench/internal/abfile"
)

// Outcome is what go test printed that failed or skipped a row, or a
// failure no row shows (Report.Problems), with its side and file.
type Outcome struct {
	abfile.Outcome
	Side int
	File string
}

// Verdict is the verdict an outcome gives a row: Failed or Skipped.
func (o *Outcome) Verdict() Verdict {
	if o.Kind == abfile.Skipped {
		return Skipped
	}
	return Failed
}

// Skip is a row that skipped and has no results on either side, with
// each side's skip line (nil where it did not skip it).
type Skip struct {
	Pkg   string `json:"package"`
	Name  string `json:"name"` // as the skip line names it, without "Benchmark"
	Sides [2]*Outcome
}

// outcomes marks the rows that failed, or that one side lacks because it
// failed or skipped them there, and lists the failures no row shows and
// the skips of rows neither side ran.
func (r *Report) outcomes(files []*abfile.File) {
	// Rows by package and by go test's name of them (full name, and
	// without the -GOMAXPROCS suffix).
	index := map[[2]string][]*Row{}
	for _, t := range r.Tables {
		for _, row := range t.Rows {
			for _, n := range slices.Compact([]string{row.Name, abfile.WithoutProcs(row.Name)}) {
				index[[2]string{t.Pkg, n}] = append(index[[2]string{t.Pkg, n}], row)
			}
		}
	}
	// rowsOf are the rows an outcome names; with sub, for a parent's
	// skip, the rows below it.
	rowsOf := func(o abfile.Outcome, sub bool) []*Row {
		name, ok := strings.CutPrefix(o.Name, "Benchmark")
		if !ok {
			return nil
		}
		pkg := path.Base(o.Pkg)
		rows := index[[2]string{pkg, name}]
		if rows != nil || !sub {
			return rows
		}
		for _, t := range r.Tables {
			for _, row := range t.Rows {
				if t.Pkg == pkg && strings.HasPrefix(row.Name, abfile.WithoutProcs(name)+"/") {
					rows = append(rows, row)
				}
			}
		}
		return rows
	}
	skips := map[[2]string]*Skip{}
	for side, f := range files {
		of := func(o abfile.Outcome) *Outcome { return &Outcome{o, side, f.Path} }
		// A row the other side has and this side lacks: did this side
		// skip it, or did its package fail?
		lacks := func(row *Row) bool { return row.Samples[side] == nil && row.Samples[1-side] != nil }
		for _, o := range f.Outcomes {
			if o.Kind == abfile.Failed && !o.Parent {
				rows := rowsOf(o, false)
				for _, row := range rows {
					row.fail(of(o))
				}
				if len(rows) == 0 {
					r.Problems = append(r.Problems, *of(o))
				}
			}
		}
		failedPkg := map[string]abfile.Outcome{}
		for _, o := range f.Outcomes {
			if o.Kind == abfile.BinaryFailed {
				if _, ok := failedPkg[path.Base(o.Pkg)]; !ok {
					failedPkg[path.Base(o.Pkg)] = o
				}
				r.Problems = append(r.Problems, *of(o))
			}
			if o.Kind != abfile.Skipped {
				continue
			}
			why := of(o)
			rows := rowsOf(o, true)
			for _, row := range rows {
				if lacks(row) {
					row.fail(why)
				}
			}
			if len(rows) > 0 || !strings.HasPrefix(o.Name, "Benchmark") {
				continue // a row's skip, or a test's (go test -v)
			}
			k := [2]string{path.Base(o.Pkg), abfile.WithoutProcs(strings.TrimPrefix(o.Name, "Benchmark"))}
			if skips[k] == nil {
				skips[k] = &Skip{Pkg: k[0], Name: k[1]}
				r.Skips = append(r.Skips, skips[k])
			}
			if skips[k].Sides[side] == nil {
				skips[k].Sides[side] = why
			}
		}
		for _, t := range r.Tables {
			if o, ok := failedPkg[t.Pkg]; ok {
				for _, row := range t.Rows {
					if lacks(row) {
						row.fail(of(o))
					}
				}
			}
		}
	}
}

// fail records a row's failure or skip: the first of each verdict's,
// a failure winning over a skip.
func (row *Row) fail(o *Outcome) {
	if row.Outcome == nil || row.Outcome.Verdict() == Skipped && o.Verdict() == Failed {
		row.Outcome = o
	}
}
