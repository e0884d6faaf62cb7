//go:build linux

package abseries

import (
	"fmt"

	"github.com/kbench/kbench/internal/abfile"
	"github.com/kbench/kbench/internal/abstat"
)

// Series is a series of kernels' result files (in series order, with
// the labels a report gives them), grouped by row.
type Series struct {
	Files, Labels []string
	Rows          []SeriesRow
}

// SeriesRow is one row (in its primary unit) over the kernels: its
// table (package, unit, direction) as a comparison groups it, its name,
// and Medians[k], kernel k's boot medians in boot order.
type SeriesRow struct {
	*abstat.Table
	Name    string
	Medians [][]float64
}

// Read reads the result files of a series of kernels once, a file a
// kernel, and takes each row's boot medians by kernel, grouped as
// kbcompare's report groups them.
func Read(paths, labels []string) (*Series, error) {
	if len(paths) < 2 || len(labels) != len(paths) {
		return nil, fmt.Errorf("%d files and %d labels: want at least 2 files, a label each", len(paths), len(labels))
	}
	files, units, err := abfile.Read(paths...)
	if err != nil {
		return nil, err
	}
	s := &Series{Files: paths, Labels: labels}
	// A boot belongs to one kernel.
	kernelOf := map[string]int{}
	for t, row := range abstat.Grouped(files, units).Primaries() {
		r := SeriesRow{Table: t, Name: row.Name, Medians: make([][]float64, len(paths))}
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
