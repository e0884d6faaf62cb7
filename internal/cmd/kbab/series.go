//go:build linux

package main

import (
	"bytes"
	"fmt"
	"path/filepath"

	"github.com/kbench/kbench/internal/abreport"
	"github.com/kbench/kbench/internal/abseries"
)

// seriesReport ends a series: each row's change points, as kbcompare
// -series writes them, and kbcompare -series -plot's pictures in
// DIR/series/.
func (d *driver) seriesReport() ([]byte, int, error) {
	s := d.st.Settings
	run := &abreport.SeriesRun{List: s.List, Boots: s.Boots, Pictures: "series/"}
	var paths, labels []string
	for _, k := range s.Kernels {
		paths, labels = append(paths, d.result(k.Label)), append(labels, k.Label)
		run.Kernels = append(run.Kernels, abreport.Kernel{Label: k.Label, Boots: describe(k)})
	}
	ser, err := abseries.Read(paths, labels)
	if err != nil {
		return nil, 0, fmt.Errorf("reading the series: %v", err)
	}
	o := abseries.DefaultOptions
	rep := abreport.NewSeries(ser, abseries.Detect(ser.Medians(), o), o)
	if err := abreport.WriteSeriesPlots(filepath.Join(d.cfg.out, "series"), rep); err != nil {
		return nil, 0, err
	}
	rep.Run = run
	var b bytes.Buffer
	err = abreport.WriteSeriesText(&b, rep)
	return b.Bytes(), rep.Exit(), err
}
