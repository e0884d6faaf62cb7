//go:build linux

package abseries

import (
	"fmt"

	"github.com/kbench/kbench/internal/abfile"
	"github.com/kbench/kbench/internal/abstat"
)

// Series is a series of kernels' result files, grouped by row: what
// Detect reads, with the names a report gives it.
type Series struct {
	// Files are the kernels' result files in series order, Labels the
	// names the report gives the kernels (a release, a file name).
	Files, Labels []string
	Rows          []SeriesRow
}

// SeriesRow is one row (a benchmark in its Primary unit, as
// kbcompare's verdicts are) over the kernels.
type SeriesRow struct {
	Pkg    string // the package's last path element
	Path   string // its import path
	Ident  string // further configuration that tells rows apart
	Name   string
	Unit   string // benchfmt's tidied unit: sec/op
	Better int    // +1 higher is better, -1 lower, 0 unknown
	// Medians[k] are kernel k's boot medians, in boot order; empty where
	// the kernel's file has no result for the row.
	Medians [][]float64
}

// Read reads the result files of a series of kernels once, one file
// per kernel in series order, labelled labels, and takes each row's
// boot medians by kernel from their grouped samples (package abstat's
// Grouped: each benchmark in its Primary unit, as kbcompare's report
// gives it its verdict). Rows in the order of their first appearance.
func Read(paths, labels []string) (*Series, error) {
	if len(paths) < 2 || len(labels) != len(paths) {
		return nil, fmt.Errorf("%d files and %d labels: want at least 2 files, a label each", len(paths), len(labels))
	}
	files, units, err := abfile.Read(paths...)
	if err != nil {
		return nil, err
	}
	s := &Series{Files: paths, Labels: labels}
	// A boot belongs to one kernel: the same boot id in two kernels'
	// files is one file given twice, or boots appended to the wrong one.
	kernelOf := map[string]int{}
	for t, row := range abstat.Grouped(files, units).Primaries() {
		r := SeriesRow{Pkg: t.Pkg, Path: t.Path, Ident: t.Ident, Name: row.Name, Unit: t.Unit,
			Better: t.Better, Medians: make([][]float64, len(paths))}
		for kernel, bs := range row.Samples {
			if bs == nil {
				continue
			}
			for _, id := range bs.IDs {
				if other, ok := kernelOf[id]; ok && other != kernel && id != "" {
					return nil, fmt.Errorf("boot %s is in %s (%s) and in %s (%s): a boot is one kernel's; the same file given twice?",
						id, paths[other], labels[other], paths[kernel], labels[kernel])
				}
				kernelOf[id] = kernel
			}
			r.Medians[kernel] = bs.Medians()
		}
		s.Rows = append(s.Rows, r)
	}
	return s, nil
}

// Medians are the rows' boot medians by kernel, as Detect takes them.
func (s *Series) Medians() [][][]float64 {
	out := make([][][]float64, len(s.Rows))
	for i, r := range s.Rows {
		out[i] = r.Medians
	}
	return out
}
