//go:build linux

package abreport

import (
	"bytes"
	"cmp"
	"fmt"
	"html"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"golang.org/x/perf/benchunit"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/kbench/kbench/internal/abstat"
)

// Colors: the old side blue, the new one orange (told apart also by
// their place: old on the left); a series' change red.
var (
	oldColor   = color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}
	newColor   = color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}
	worseColor = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
)

// WritePlots draws, into dir, one SVG per row that changed or is
// underpowered, its caption as its <title>.
func WritePlots(dir string, a *AB) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	n := 0
	for _, row := range a.Rows {
		if !(row.Verdict.Moved() || row.Verdict == abstat.Underpowered) || row.Old == nil || row.New == nil {
			continue
		}
		n++
		if err := rowPlot(dir, fmt.Sprintf("row-%03d-%s", n, fileSafe(row.Package+"-"+row.Name+"-"+row.Unit)), row); err != nil {
			return err
		}
	}
	return nil
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9_.=-]+`)

// fileSafe makes s part of a file name: each run of other characters "_", at most 80 bytes.
func fileSafe(s string) string {
	s = unsafeChars.ReplaceAllString(s, "_")
	return s[:min(len(s), 80)]
}

func pct(x float64) string {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return "?"
	}
	return fmt.Sprintf("%+.1f%%", 100*x)
}

// axisUnit is the unit with the scaler's prefix, as benchstat writes it
// ("ns/op" for sec/op at n).
func axisUnit(unit string, s benchunit.Scaler) string {
	if rest, ok := strings.CutPrefix(unit, "sec/"); ok {
		return s.Prefix + "s/" + rest
	}
	return s.Prefix + unit
}

// canvas is a plot that keeps the first error of the lines and dots
// added to it (a NaN or an infinity), for save to return.
type canvas struct {
	*plot.Plot
	err error
}

// line adds a line from (x0, y0) to (x1, y1) in col, width points
// wide, dashed or not.
func (c *canvas) line(col color.Color, width float64, dashed bool, x0, y0, x1, y1 float64) {
	l, err := plotter.NewLine(plotter.XYs{{X: x0, Y: y0}, {X: x1, Y: y1}})
	if c.err = cmp.Or(c.err, err); err == nil {
		l.LineStyle = draw.LineStyle{Color: col, Width: vg.Points(width)}
		if dashed {
			l.LineStyle.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		c.Add(l)
	}
}

// column draws vals (divided by factor) as dots spread across x ± half
// in their order, and center as a black bar across x ± bar; *lo and *hi
// widen to the dots.
func (c *canvas) column(x, half, bar float64, vals []float64, center, factor float64, col color.Color, radius float64, lo, hi *float64) {
	pts := make(plotter.XYs, len(vals))
	for j, v := range vals {
		off := 0.0
		if len(vals) > 1 {
			off = -half + 2*half*float64(j)/float64(len(vals)-1)
		}
		pts[j] = plotter.XY{X: x + off, Y: v / factor}
		*lo, *hi = math.Min(*lo, pts[j].Y), math.Max(*hi, pts[j].Y)
	}
	sc, err := plotter.NewScatter(pts)
	if c.err = cmp.Or(c.err, err); err == nil {
		sc.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(radius), Shape: draw.CircleGlyph{}}
		c.Add(sc)
	}
	c.line(color.Black, 2.5, false, x-bar, center/factor, x+bar, center/factor)
}

// save writes c as dir/name.svg, w by h at most 14 inches wide, with
// caption as its <title> (what a viewer shows on hover, a reader
// reads first).
func (c *canvas) save(dir, name, caption string, w, h vg.Length) error {
	var b bytes.Buffer
	wt, err := c.WriterTo(min(w, 14*vg.Inch), h, "svg")
	if err = cmp.Or(c.err, err); err == nil {
		_, err = wt.WriteTo(&b)
	}
	if err != nil {
		return fmt.Errorf("drawing %s.svg: %w", name, err)
	}
	svg := b.String()
	i := strings.Index(svg, "<svg")
	i += strings.Index(svg[i:], ">") + 1
	svg = svg[:i] + "\n<title>" + html.EscapeString(caption) + "</title>" + svg[i:]
	return os.WriteFile(filepath.Join(dir, name+".svg"), []byte(svg), 0o666)
}

// rowPlot draws one row: each boot's samples in a column of its own,
// old's boots on the left, new's on the right, with each boot's median
// as a bar and each side's center as a dashed line.
func rowPlot(dir, name string, row *Row) error {
	o, n := float64(row.Old.Center), float64(row.New.Center)
	scaler := benchunit.CommonScale([]float64{o, n}, benchunit.ClassOf(row.Unit))
	p := canvas{Plot: plot.New()}
	cl := row.cells()
	p.Title.Text = fmt.Sprintf("%s %s\n%s (%s): new %s, %s (p=%s, mde %s)", row.Package, row.Name, row.Unit, direction(row),
		pct(float64(row.Change)), row.Verdict, cl.P, formatMDE(float64(row.MDE)))
	p.Y.Label.Text = fmt.Sprintf("%s (%s)", axisUnit(row.Unit, scaler), direction(row))
	p.X.Label.Text = "old boots (blue, left) | new boots (orange, right); bar: a boot's median, dashed: a side's center"
	var names []string
	x, lo, hi := 0.0, math.Inf(1), math.Inf(-1)
	for side, bs := range row.src.Samples {
		col, x0, medians := []color.Color{oldColor, newColor}[side], x, bs.Medians()
		for i, boot := range bs.IDs {
			p.column(x, 0.25, 0.35, bs.Values[i], medians[i], scaler.Factor, col, 2.2, &lo, &hi)
			names = append(names, fmt.Sprintf("%s %d\n%s", sideNames[side], i+1, shortBoot(boot)))
			x++
		}
		c := []float64{o, n}[side] / scaler.Factor
		p.line(col, 1.5, true, x0-0.45, c, x-0.55, c)
		if side == 0 {
			names = append(names, "")
			x++ // a gap between the sides
		}
	}
	p.NominalX(names...)
	switch {
	case lo > 0 && hi > 4*lo:
		// Outliers many times the median (a contended machine) would
		// squash the rest: a log scale keeps every boot's core readable.
		p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, logTicks{}
		p.Y.Label.Text += ", log scale"
	case lo > 0 && lo < 0.5*hi:
		// Start at zero where the values are all positive and not far
		// from it, so that a change looks its size.
		p.Y.Min = 0
	}
	caption := fmt.Sprintf("%s %s %s: %s. Old %s, new %s, change %s [%s, %s], p %s (%s), mde %s; %s. Dots are samples, one column per "+
		"boot; a bar marks each boot's median, the dashed line each side's center.", row.Package, row.Name, row.Unit, row.Verdict,
		cl.Old, cl.New, cl.Change, pct(float64(row.ChangeLo)), pct(float64(row.ChangeHi)), cl.P,
		map[bool]string{true: "Welch, boots as samples", false: "Mann-Whitney U, per sample"}[row.Test == "welch"], cl.MDE, direction(row))
	return p.save(dir, name, caption, vg.Length(max(7, 0.9*x))*vg.Inch, 4.5*vg.Inch)
}

// logTicks mark a log axis at 1, 2, 3 and 5 times each power of ten,
// labelled, and at the other digits, unlabelled.
type logTicks struct{}

func (logTicks) Ticks(min, max float64) []plot.Tick {
	var Ticks []plot.Tick
	for e := math.Floor(math.Log10(min)); e <= math.Ceil(math.Log10(max)); e++ {
		for d := 1.0; d <= 9; d++ {
			v := d * math.Pow(10, e)
			if v < min || v > max {
				continue
			}
			t := plot.Tick{Value: v}
			if d == 1 || d == 2 || d == 3 || d == 5 {
				t.Label = strconv.FormatFloat(v, 'g', 4, 64)
			}
			Ticks = append(Ticks, t)
		}
	}
	return Ticks
}

// WriteSeriesPlots draws, into dir, one SVG per tested row: its boot
// medians by kernel, each change marked, its caption as its <title>;
// the rows with a change point first, then those without with the
// change they could have seen, so that a series that found nothing
// still shows what it measured.
func WriteSeriesPlots(dir string, r *SeriesReport) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	n := 0
	for _, changed := range []bool{true, false} {
		for _, row := range r.Rows {
			if (len(row.Changes) > 0) != changed || row.Untested != "" {
				continue
			}
			n++
			if err := seriesPlot(dir, fmt.Sprintf("series-%03d-%s", n, fileSafe(row.Package+"-"+row.Name+"-"+row.Unit)), r, row); err != nil {
				return err
			}
		}
	}
	return nil
}

// seriesPlot draws a row of the series.
func seriesPlot(dir, name string, r *SeriesReport, sr *SeriesRow) error {
	row, res := sr.row, sr.res
	scaler := benchunit.CommonScale(res.Centers, benchunit.ClassOf(row.Unit))
	p := canvas{Plot: plot.New()}
	var short, long []string
	for _, c := range sr.Changes {
		short = append(short, fmt.Sprintf("%s after %s", pct(float64(c.Ratio)-1), c.From))
		long = append(long, fmt.Sprintf("between %s and %s %s [%s, %s] (q %.2g)", c.From, c.To,
			pct(float64(c.Ratio)-1), pct(float64(c.Lo)-1), pct(float64(c.Hi)-1), c.Q))
	}
	if len(short) == 0 {
		short = []string{"no change, mde " + formatMDE(res.MDE)}
		long = []string{fmt.Sprintf("no change; it could have seen %s (a step in the middle) / %s (before the last kernel) at 80%% power",
			formatMDE(res.MDE), formatMDE(res.MDEEnd))}
	}
	p.Title.Text = fmt.Sprintf("%s\n%s: %s", sr.title(), row.Unit, strings.Join(short, ", "))
	dir1 := "unknown direction"
	if row.Better != 0 {
		dir1 = dirWord(row.Better) + " is better"
	}
	p.Y.Label.Text = fmt.Sprintf("%s (%s)", axisUnit(row.Unit, scaler), dir1)
	p.X.Label.Text = "kernel; dots: boot medians, dash: a kernel's center, red: a change"
	lo, hi := math.Inf(1), math.Inf(-1)
	for k, meds := range row.Medians {
		if len(meds) > 0 {
			p.column(float64(k), 0.2, 0.3, meds, res.Centers[k], scaler.Factor, oldColor, 2.5, &lo, &hi)
		}
	}
	for _, c := range res.Changes {
		x := float64(c.After) + 0.5
		p.line(worseColor, 2, false, x, lo, x, hi)
	}
	var labels []string
	for _, k := range r.Kernels {
		labels = append(labels, k.Label)
	}
	p.NominalX(labels...)
	if lo > 0 && lo < 0.5*hi {
		p.Y.Min = 0
	}
	caption := fmt.Sprintf("%s (%s): %s. A dot per boot median, the dash across a kernel its center, a red line where the series "+
		"changed.", sr.title(), row.Unit, strings.Join(long, "; "))
	return p.save(dir, name, caption, vg.Length(max(7, 0.9*float64(len(row.Medians))))*vg.Inch, 4.5*vg.Inch)
}
