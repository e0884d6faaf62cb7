//go:build linux

package main

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"

	"github.com/kbench/kbench/internal/abreport"
	"github.com/kbench/kbench/internal/abseries"
)

// seriesReport ends a series: each row's change points over the
// kernels (abseries: the kernels' files read as kbcompare reads them,
// Detect's binary segmentation and permutation test, the rows one
// family), in abreport's form, as kbcompare -series writes it, after a
// line of the run's design and each kernel's image and cmdline; and a
// picture of each changed row in DIR/series/. Exit status 1 where a
// change point is worse or a row untested (a kernel failed it, or has
// too few boots of it), as kbcompare -series' 1 is a worse change.
func (d *driver) seriesReport(stdout io.Writer) int {
	s := d.st.Settings
	var paths, labels []string
	for _, k := range s.Kernels {
		paths, labels = append(paths, d.result(k.Label)), append(labels, k.Label)
	}
	ser, err := abseries.Read(paths, labels)
	if err != nil {
		fmt.Fprintf(d.stderr, "kbab: reading the series: %v\n", err)
		return exitUsage
	}
	o := abseries.DefaultOptions
	rep := &abreport.SeriesReport{Series: ser, Results: abseries.Detect(ser.Medians(), o), Opts: o}
	var b bytes.Buffer
	fmt.Fprintf(&b, "kbab -series %s: %d kernels, %d boots each, in balanced rounds\n", s.List, len(s.Kernels), s.Boots)
	for _, k := range s.Kernels {
		fmt.Fprintf(&b, "  %s: %s\n", k.Label, describe(k))
	}
	b.WriteString("\n")
	if err := abreport.WriteSeriesText(&b, rep); err != nil {
		fmt.Fprintf(d.stderr, "kbab: %v\n", err)
		return exitUsage
	}
	code := 0
	changed := false
	for i, res := range rep.Results {
		if res.Untested != "" {
			code = 1
		}
		for _, c := range res.Changes {
			changed = true
			if abreport.ChangeWord(c.Ratio, ser.Rows[i].Better) == "worse" {
				code = 1
			}
		}
	}
	// The pictures are kbcompare -series -plot's: one per changed row
	// and index.md naming them.
	if changed {
		if err := abreport.WriteSeriesPlots(filepath.Join(d.cfg.out, "series"), rep); err != nil {
			fmt.Fprintf(d.stderr, "kbab: %v\n", err)
			return exitUsage
		}
		b.WriteString("\npictures: series/index.md (a .png and .svg per changed row)\n")
	}
	if err := d.writeReport(stdout, b.Bytes()); err != nil {
		fmt.Fprintf(d.stderr, "kbab: %v\n", err)
		return exitUsage
	}
	return code
}
