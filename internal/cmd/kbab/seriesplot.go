//go:build linux

package main

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/kbench/kbench/internal/abreport"
)

// seriesPlot draws row i of a series, a changed row, into dir as
// name.svg and name.png: each kernel's boot medians (dots) and center (a
// bar), in series order, and each change point as a dashed line between
// its two kernels, labeled with its ratio. kbcompare -series -plot draws
// the same from the same report; the two belong in one package of
// pictures that kbab and kbcompare share.
func seriesPlot(dir, name string, r *abreport.SeriesReport, i int) error {
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return err
	}
	meds, rr := r.Series.Rows[i].Medians, r.Results[i]
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s (%s)", r.RowTitle(i), r.Series.Rows[i].Unit)
	p.Y.Label.Text = "boot medians (dots), kernel centers (bars)"
	var names []string
	lo, hi := math.Inf(1), math.Inf(-1)
	for k, m := range meds {
		names = append(names, r.Series.Labels[k])
		pts := make(plotter.XYs, len(m))
		for j, v := range m {
			off := 0.0
			if len(m) > 1 {
				off = -0.2 + 0.4*float64(j)/float64(len(m)-1)
			}
			pts[j] = plotter.XY{X: float64(k) + off, Y: v}
			lo, hi = min(lo, v), max(hi, v)
		}
		if len(pts) > 0 {
			sc, err := plotter.NewScatter(pts)
			if err != nil {
				return err
			}
			sc.GlyphStyle = draw.GlyphStyle{Color: color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, Radius: vg.Points(2.5), Shape: draw.CircleGlyph{}}
			p.Add(sc)
		}
		if k < len(rr.Centers) {
			c := rr.Centers[k]
			bar, err := plotter.NewLine(plotter.XYs{{X: float64(k) - 0.3, Y: c}, {X: float64(k) + 0.3, Y: c}})
			if err != nil {
				return err
			}
			bar.LineStyle = draw.LineStyle{Color: color.Black, Width: vg.Points(2)}
			p.Add(bar)
		}
	}
	for _, c := range rr.Changes {
		x := float64(c.After) + 0.5
		line, err := plotter.NewLine(plotter.XYs{{X: x, Y: lo}, {X: x, Y: hi}})
		if err != nil {
			return err
		}
		line.LineStyle = draw.LineStyle{Color: color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}, Width: vg.Points(1.5), Dashes: []vg.Length{vg.Points(5), vg.Points(3)}}
		lab, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: x, Y: hi}}, Labels: []string{pct(c.Ratio)}})
		if err != nil {
			return err
		}
		p.Add(line, lab)
	}
	p.NominalX(names...)
	w := vg.Length(max(6, 0.8*float64(len(meds)))) * vg.Inch
	for _, ext := range []string{".svg", ".png"} {
		if err := p.Save(w, 4*vg.Inch, filepath.Join(dir, name+ext)); err != nil {
			return fmt.Errorf("drawing %s%s: %w", name, ext, err)
		}
	}
	return nil
}
