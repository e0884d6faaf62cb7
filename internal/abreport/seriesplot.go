//go:build linux

package abreport

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/perf/benchunit"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// WriteSeriesPlots draws, into dir, one picture per row with a change
// point (its boot medians by kernel, each change marked), each as SVG
// and PNG, and index.md naming them.
func WriteSeriesPlots(dir string, r *SeriesReport) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var index strings.Builder
	index.WriteString("# kbcompare -series plots\n\nKernels, in series order: ")
	for k, l := range r.Series.Labels {
		if k > 0 {
			index.WriteString(", ")
		}
		fmt.Fprintf(&index, "%d `%s`", k+1, l)
	}
	index.WriteString(".\n\nEach picture is one row with a change point: a dot per boot median, the dash across a kernel " +
		"its center, a red line where the series changed, the gray dashed lines the centers of the segments between changes.\n\n")
	n := 0
	for i, res := range r.Results {
		if len(res.Changes) == 0 {
			continue
		}
		n++
		row := r.Series.Rows[i]
		name := fmt.Sprintf("series-%03d-%s", n, fileSafe(row.Pkg+"-"+row.Name+"-"+row.Unit))
		if err := seriesPlot(dir, name, r, i); err != nil {
			return err
		}
		var cs []string
		for _, c := range res.Changes {
			cs = append(cs, fmt.Sprintf("between %s and %s %s [%s, %s] (q %.2g)", r.Series.Labels[c.After], r.Series.Labels[c.After+1],
				pct(c.Ratio-1), pct(c.Lo-1), pct(c.Hi-1), c.Q))
		}
		fmt.Fprintf(&index, "## %s (%s)\n\n%s.\n\n![%s](%s.png) ([svg](%s.svg))\n\n", r.RowTitle(i), row.Unit, strings.Join(cs, "; "), name, name, name)
	}
	if n == 0 {
		index.WriteString("No row changed.\n")
	}
	return os.WriteFile(filepath.Join(dir, "index.md"), []byte(index.String()), 0o644)
}

// seriesPlot draws row i of the series.
func seriesPlot(dir, name string, r *SeriesReport, i int) error {
	row, res := r.Series.Rows[i], r.Results[i]
	scaler := benchunit.CommonScale(res.Centers, benchunit.ClassOf(row.Unit))
	p := plot.New()
	var cs []string
	for _, c := range res.Changes {
		cs = append(cs, fmt.Sprintf("%s after %s", pct(c.Ratio-1), r.Series.Labels[c.After]))
	}
	p.Title.Text = fmt.Sprintf("%s\n%s: %s", r.RowTitle(i), row.Unit, strings.Join(cs, ", "))
	dir1 := "unknown direction"
	switch row.Better {
	case 1:
		dir1 = "higher is better"
	case -1:
		dir1 = "lower is better"
	}
	p.Y.Label.Text = fmt.Sprintf("%s (%s)", axisUnit(row.Unit, scaler), dir1)
	p.X.Label.Text = "kernel; dots: boot medians, dash: a kernel's center, red: a change"
	lo, hi := math.Inf(1), math.Inf(-1)
	for k, meds := range row.Medians {
		pts := make(plotter.XYs, len(meds))
		for j, v := range meds {
			off := 0.0
			if len(meds) > 1 {
				off = -0.2 + 0.4*float64(j)/float64(len(meds)-1)
			}
			pts[j] = plotter.XY{X: float64(k) + off, Y: v / scaler.Factor}
			lo, hi = math.Min(lo, pts[j].Y), math.Max(hi, pts[j].Y)
		}
		if len(pts) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: oldColor, Radius: vg.Points(2.5), Shape: draw.CircleGlyph{}}
		c := res.Centers[k] / scaler.Factor
		bar, err := plotter.NewLine(plotter.XYs{{X: float64(k) - 0.3, Y: c}, {X: float64(k) + 0.3, Y: c}})
		if err != nil {
			return err
		}
		bar.LineStyle = draw.LineStyle{Color: blackColor, Width: vg.Points(2.5)}
		p.Add(sc, bar)
	}
	// The segments' centers: the kernels between changes, each boot
	// weighing alike (the change's ratio is of these).
	bounds := []int{-1}
	for _, c := range res.Changes {
		bounds = append(bounds, c.After)
	}
	bounds = append(bounds, len(row.Medians)-1)
	for b := 1; b < len(bounds); b++ {
		a, z := bounds[b-1]+1, bounds[b]
		var sum float64
		var n int
		for k := a; k <= z; k++ {
			for _, v := range row.Medians[k] {
				sum += res.Scale.To(v)
				n++
			}
		}
		if n == 0 {
			continue
		}
		m := res.Scale.From(sum/float64(n)) / scaler.Factor
		seg, err := plotter.NewLine(plotter.XYs{{X: float64(a) - 0.45, Y: m}, {X: float64(z) + 0.45, Y: m}})
		if err != nil {
			return err
		}
		seg.LineStyle = draw.LineStyle{Color: grayColor, Width: vg.Points(1.5), Dashes: []vg.Length{vg.Points(5), vg.Points(3)}}
		p.Add(seg)
	}
	for _, c := range res.Changes {
		x := float64(c.After) + 0.5
		mark, err := plotter.NewLine(plotter.XYs{{X: x, Y: lo}, {X: x, Y: hi}})
		if err != nil {
			return err
		}
		mark.LineStyle = draw.LineStyle{Color: worseColor, Width: vg.Points(2)}
		p.Add(mark)
	}
	p.NominalX(r.Series.Labels...)
	if lo > 0 && lo < 0.5*hi {
		p.Y.Min = 0
	}
	w := vg.Length(max(7, 0.9*float64(len(row.Medians)))) * vg.Inch
	return saveBoth(p, dir, name, min(w, 14*vg.Inch), 4.5*vg.Inch)
}
