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
// picture of each row in DIR/series/; the exit status is kbcompare
// -series' (abreport.SeriesReport.Exit).
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
	rep := abreport.NewSeries(ser, abseries.Detect(ser.Medians(), o), o)
	// The pictures are kbcompare -series -plot's: one per row, the
	// changed rows first.
	if err := abreport.WriteSeriesPlots(filepath.Join(d.cfg.out, "series"), rep); err != nil {
		fmt.Fprintf(d.stderr, "kbab: %v\n", err)
		return exitUsage
	}
	rep.Run = &abreport.SeriesRun{List: s.List, Boots: s.Boots, Pictures: "series/"}
	for _, k := range s.Kernels {
		rep.Run.Kernels = append(rep.Run.Kernels, abreport.Kernel{Label: k.Label, Boots: describe(k)})
	}
	var b bytes.Buffer
	if err := abreport.WriteSeriesText(&b, rep); err != nil {
		fmt.Fprintf(d.stderr, "kbab: %v\n", err)
		return exitUsage
	}
	if err := d.writeReport(stdout, b.Bytes()); err != nil {
		fmt.Fprintf(d.stderr, "kbab: %v\n", err)
		return exitUsage
	}
	return rep.Exit()
}
