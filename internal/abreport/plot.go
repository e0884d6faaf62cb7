//go:build linux

package abreport

import (
	"bytes"
	"cmp"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/perf/benchunit"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/kbench/kbench/internal/abstat"
	"github.com/kbench/kbench/internal/profdelta"
)

// Colors: the old side blue, the new one orange (told apart also by
// their place: old on the left); verdicts in the overview.
var (
	oldColor   = color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}
	newColor   = color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}
	worseColor = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
	betterClr  = color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}
	grayColor  = color.RGBA{R: 0x88, G: 0x88, B: 0x88, A: 0xff}
	blackColor = color.RGBA{A: 0xff}
)

// WritePlots draws, into dir, one picture per row that changed or is
// underpowered, an overview forest plot of every compared row's change
// with its interval, each as SVG and PNG, and index.md naming them.
func WritePlots(dir string, a *AB) error {
	r := a
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var index strings.Builder
	fmt.Fprintf(&index, "# kbcompare plots\n\nold: `%s`  \nnew: `%s`\n\n", r.Old, r.New)
	if err := forestPlot(dir, r); err != nil {
		return err
	}
	index.WriteString("## Overview\n\n" +
		"Each compared row's change (new against old) with its 95% interval, on a log scale turned so that " +
		"right is better for every unit (sec/op and loops/s of one benchmark fall on the same side); the " +
		"shaded band is ±threshold; a dashed interval is cut short (its end lies further out). Red is worse, green better, gray " +
		"underpowered (could not have seen the threshold), black ~.\n\n![overview](overview.png) ([svg](overview.svg))\n\n## Rows\n\n")
	n := 0
	for _, row := range r.Rows {
		if !(row.Verdict.Moved() || row.Verdict == abstat.Underpowered) || row.Old == nil || row.New == nil {
			continue
		}
		n++
		name := fmt.Sprintf("row-%03d-%s", n, fileSafe(row.Package+"-"+row.Name+"-"+row.Unit))
		if err := rowPlot(dir, name, row); err != nil {
			return err
		}
		fmt.Fprintf(&index, "### %s %s %s: %s\n\n%s\n\n![%s](%s.png) ([svg](%s.svg))\n\n", row.Package, row.Name, row.Unit,
			row.Verdict, rowCaption(row), name, name, name)
	}
	if n == 0 {
		index.WriteString("No row changed or is underpowered.\n")
	}
	sec, err := writeProfilePlots(dir, a.profs)
	if err != nil {
		return err
	}
	if sec != "" && !strings.HasSuffix(index.String(), "\n\n") {
		index.WriteString("\n")
	}
	index.WriteString(sec)
	return os.WriteFile(filepath.Join(dir, "index.md"), []byte(index.String()), 0o644)
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9_.=-]+`)

func fileSafe(s string) string {
	s = unsafeChars.ReplaceAllString(s, "_")
	if len(s) > 80 {
		s = s[:80]
	}
	return s
}

func rowCaption(row *Row) string {
	c := row.cells()
	return fmt.Sprintf("old %s, new %s, change %s [%s, %s], p %s (%s), mde %s; %s. Dots are samples, one column per "+
		"boot; a bar marks each boot's median, the dashed line each side's center.",
		c.Old, c.New, c.Change, pct(float64(row.ChangeLo)), pct(float64(row.ChangeHi)), c.P, map[bool]string{true: "Welch, boots as samples",
			false: "Mann-Whitney U, per sample"}[row.Test == "welch"], c.MDE, direction(row))
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

// rowPlot draws one row: each boot's samples in a column of its own,
// old's boots on the left, new's on the right, with each boot's median
// as a bar and each side's center as a dashed line.
func rowPlot(dir, name string, row *Row) error {
	o, n := float64(row.Old.Center), float64(row.New.Center)
	scaler := benchunit.CommonScale([]float64{o, n}, benchunit.ClassOf(row.Unit))
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s %s\n%s (%s): new %s, %s (p=%s, mde %s)", row.Package, row.Name, row.Unit, direction(row),
		pct(float64(row.Change)), row.Verdict, row.cells().P, formatMDE(float64(row.MDE)))
	p.Y.Label.Text = fmt.Sprintf("%s (%s)", axisUnit(row.Unit, scaler), direction(row))
	p.X.Label.Text = "old boots (blue, left) | new boots (orange, right); bar: a boot's median, dashed: a side's center"
	var names []string
	x := 0.0
	var lo, hi float64 = math.Inf(1), math.Inf(-1)
	for side, bs := range row.src.Samples {
		col := []color.Color{oldColor, newColor}[side]
		label := []string{"old", "new"}[side]
		var centerX0 float64 = x
		medians := bs.Medians()
		for i, boot := range bs.IDs {
			if err := dotColumn(p, x, 0.25, 0.35, bs.Values[i], medians[i], scaler.Factor, col, 2.2, &lo, &hi); err != nil {
				return err
			}
			names = append(names, fmt.Sprintf("%s %d\n%s", label, i+1, shortBoot(boot)))
			x++
		}
		c := []float64{o, n}[side] / scaler.Factor
		if err := addLine(p, draw.LineStyle{Color: col, Width: vg.Points(1.5), Dashes: dashes}, plotter.XY{X: centerX0 - 0.45, Y: c}, plotter.XY{X: x - 0.55, Y: c}); err != nil {
			return err
		}
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
	w := vg.Length(max(7, 0.9*x)) * vg.Inch
	return saveBoth(p, dir, name, min(w, 14*vg.Inch), 4.5*vg.Inch)
}

// forestPlot draws every compared headline row's change with its
// interval, one line per row, on a log scale of new/old.
func forestPlot(dir string, r *AB) error {
	type item struct {
		label          string
		ratio, lo, hi  float64
		verdict        abstat.Verdict
		loOpen, hiOpen bool
	}
	var items []item
	for _, row := range r.Rows {
		if row.Old == nil || row.New == nil || math.IsInf(float64(row.Change), 0) || !(row.Change > -1) { // NaN too: no place on a log axis
			continue
		}
		it := item{label: fmt.Sprintf("%s %s %s", row.Package, row.Name, row.Unit), ratio: 1 + float64(row.Change),
			lo: 1 + float64(row.ChangeLo), hi: 1 + float64(row.ChangeHi), verdict: row.Verdict}
		if row.better < 0 { // lower is better: the gain is old/new
			it.ratio, it.lo, it.hi = 1/it.ratio, 1/it.hi, 1/it.lo
		}
		if row.better == 0 {
			it.label += " (direction unknown: new/old)"
		}
		items = append(items, it)
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("kbcompare: each row's change, new against old, with its 95%% interval (%s, %d+%d boots)",
		map[bool]string{true: "boots as samples", false: "per sample"}[r.BootMode], r.Boots.Old, r.Boots.New)
	p.X.Label.Text = "<- new is worse  |  new is better ->   (log scale, each unit's better direction; shaded: within ±threshold)"
	p.X.Scale = plot.LogScale{}
	if len(items) == 0 {
		// No data gives the axis no range, which a log scale cannot
		// draw: the threshold's band stands for it.
		p.Title.Text += ": no compared rows"
		p.X.Min, p.X.Max = 1/(1+r.Threshold)/1.02, (1+r.Threshold)*1.02
		return saveBoth(p, dir, "overview", 8*vg.Inch, 3*vg.Inch)
	}
	// The range: the ratios and finite interval ends, and the threshold.
	lo, hi := 1/(1+r.Threshold)/1.02, (1+r.Threshold)*1.02
	for _, it := range items {
		lo, hi = math.Min(lo, it.ratio), math.Max(hi, it.ratio)
	}
	for i := range items {
		it := &items[i]
		if !(it.lo > 0) || math.IsInf(it.lo, 0) || math.IsNaN(it.lo) || it.lo < lo/1.5 {
			it.lo, it.loOpen = lo/1.5, true
		}
		// An end at or below 0 (1/(1+lo) of a change below -100%) is unbounded.
		if !(it.hi > 0) || math.IsInf(it.hi, 0) || math.IsNaN(it.hi) || it.hi > hi*1.5 {
			it.hi, it.hiOpen = hi*1.5, true
		}
		lo, hi = math.Min(lo, it.lo), math.Max(hi, it.hi)
	}
	p.X.Min, p.X.Max = lo/1.05, hi*1.05
	p.X.Tick.Marker = changeTicks{}
	// The ±threshold band, and no change.
	n := float64(len(items))
	band, err := plotter.NewPolygon(plotter.XYs{{X: 1 / (1 + r.Threshold), Y: -0.5}, {X: 1 + r.Threshold, Y: -0.5},
		{X: 1 + r.Threshold, Y: n - 0.5}, {X: 1 / (1 + r.Threshold), Y: n - 0.5}})
	if err != nil {
		return err
	}
	band.Color = color.RGBA{R: 0xee, G: 0xee, B: 0xee, A: 0xff}
	band.LineStyle.Width = 0
	p.Add(band)
	if err := addLine(p, draw.LineStyle{Color: grayColor, Width: vg.Points(1)}, plotter.XY{X: 1, Y: -0.5}, plotter.XY{X: 1, Y: n - 0.5}); err != nil {
		return err
	}
	var labels []string
	for i, it := range items {
		// Top to bottom in report order.
		y := n - 1 - float64(i)
		col := map[abstat.Verdict]color.Color{abstat.Worse: worseColor, abstat.Better: betterClr, abstat.Underpowered: grayColor}[it.verdict]
		if col == nil {
			col = blackColor
		}
		ci := draw.LineStyle{Color: col, Width: vg.Points(2)}
		if it.loOpen || it.hiOpen {
			ci.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
		}
		if err := addLine(p, ci, plotter.XY{X: it.lo, Y: y}, plotter.XY{X: it.hi, Y: y}); err != nil {
			return err
		}
		if err := addDots(p, col, 4, plotter.XYs{{X: it.ratio, Y: y}}); err != nil {
			return err
		}
		labels = append(labels, fmt.Sprintf("%s  [%s]", it.label, it.verdict))
	}
	rev := make([]string, len(labels))
	for i, l := range labels {
		rev[len(labels)-1-i] = l
	}
	p.NominalY(rev...)
	p.Y.Tick.Label.Font.Size = vg.Points(9)
	p.Y.Padding = 0
	h := vg.Length(1.5+0.32*n) * vg.Inch
	return saveBoth(p, dir, "overview", 11*vg.Inch, h)
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

// changeTicks label a log scale of gains (new against old in the
// unit's better direction: above 1 is better) as "5% better", "2× worse",
// no closer together than a sixth of the axis.
type changeTicks struct{}

func (changeTicks) Ticks(min, max float64) []plot.Tick {
	factors := []float64{1, 1.02, 1.05, 1.1, 1.25, 1.5, 2, 3, 5, 10, 20, 50, 100, 1000}
	var cands []float64
	for _, f := range factors {
		cands = append(cands, f)
		if f != 1 {
			cands = append(cands, 1/f)
		}
	}
	slices.Sort(cands)
	gap := (math.Log(max) - math.Log(min)) / 6
	var Ticks []plot.Tick
	// Keep 1, then the others in order of closeness to it where they
	// have room.
	slices.SortFunc(cands, func(a, b float64) int { return cmp.Compare(math.Abs(math.Log(a)), math.Abs(math.Log(b))) })
	for _, r := range cands {
		if r < min || r > max || slices.ContainsFunc(Ticks, func(t plot.Tick) bool { return math.Abs(math.Log(t.Value/r)) < gap }) {
			continue
		}
		Ticks = append(Ticks, plot.Tick{Value: r, Label: gainLabel(r)})
	}
	slices.SortFunc(Ticks, func(a, b plot.Tick) int { return cmp.Compare(a.Value, b.Value) })
	return Ticks
}

// gainLabel words a gain g (above 1 better).
func gainLabel(g float64) string {
	word, f := "better", g
	if g < 1 {
		word, f = "worse", 1/g
	}
	switch {
	case g == 1:
		return "same"
	case f >= 2:
		return fmt.Sprintf("%.3g× %s", f, word)
	}
	return fmt.Sprintf("%.3g%% %s", 100*(f-1), word)
}

// dashes are the dashed lines' pattern.
var dashes = []vg.Length{vg.Points(5), vg.Points(3)}

// addLine adds a line through pts, drawn in style.
func addLine(p *plot.Plot, style draw.LineStyle, pts ...plotter.XY) error {
	l, err := plotter.NewLine(plotter.XYs(pts))
	if err == nil {
		l.LineStyle = style
		p.Add(l)
	}
	return err
}

// addDots adds pts as dots of col, radius points wide.
func addDots(p *plot.Plot, col color.Color, radius float64, pts plotter.XYs) error {
	sc, err := plotter.NewScatter(pts)
	if err == nil {
		sc.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(radius), Shape: draw.CircleGlyph{}}
		p.Add(sc)
	}
	return err
}

// dotColumn draws vals (divided by factor) as dots spread across x ±
// half in their order, and center as a black bar across x ± bar;
// *lo and *hi widen to the dots.
func dotColumn(p *plot.Plot, x, half, bar float64, vals []float64, center, factor float64, col color.Color, radius float64, lo, hi *float64) error {
	pts := make(plotter.XYs, len(vals))
	for j, v := range vals {
		off := 0.0
		if len(vals) > 1 {
			off = -half + 2*half*float64(j)/float64(len(vals)-1)
		}
		pts[j] = plotter.XY{X: x + off, Y: v / factor}
		*lo, *hi = math.Min(*lo, pts[j].Y), math.Max(*hi, pts[j].Y)
	}
	if err := addDots(p, col, radius, pts); err != nil {
		return err
	}
	c := center / factor
	return addLine(p, draw.LineStyle{Color: blackColor, Width: vg.Points(2.5)}, plotter.XY{X: x - bar, Y: c}, plotter.XY{X: x + bar, Y: c})
}

func saveBoth(p *plot.Plot, dir, name string, w, h vg.Length) error {
	for _, ext := range []string{".svg", ".png"} {
		if err := p.Save(w, h, filepath.Join(dir, name+ext)); err != nil {
			return fmt.Errorf("drawing %s%s: %w", name, ext, err)
		}
	}
	return nil
}

// writeProfilePlots writes, per row, the difference of its profiles
// (profdelta.DiffProfile) as DIR/profile-NNN-ROW.pb.gz and pprof's
// flame graph of it as .html, and returns index.md's section.
func writeProfilePlots(dir string, rows []RowProfile) (string, error) {
	if len(rows) == 0 {
		return "", nil
	}
	var index strings.Builder
	index.WriteString("## perf-profile differences\n\n" +
		"Per profiled row, the new side's profiles against the old side's, each side's boots merged and scaled to the same number of " +
		"boots (the .pb.gz, as `pprof -diff_base` writes its difference: `go tool pprof -http=: FILE` shows it, and `-top`, `-tagfocus` " +
		"work on it), and pprof's own flame graph of it (the .html, one file): the boxes' bars show what grew (new) and shrank " +
		"(old) in the row's stacks.\n\n")
	for i, rp := range rows {
		name := fmt.Sprintf("profile-%03d-%s", i+1, fileSafe(rp.Table.Pkg+"-"+rp.Row.Name))
		p, err := profdelta.DiffProfile(rp.Boots[0], rp.Boots[1])
		if err != nil {
			fmt.Fprintf(&index, "### %s %s\n\nNo difference profile: %v\n\n", rp.Table.Pkg, rp.Row.Name, err)
			continue
		}
		var pb, html bytes.Buffer
		if err := p.Write(&pb); err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dir, name+".pb.gz"), pb.Bytes(), 0o666); err != nil {
			return "", err
		}
		fmt.Fprintf(&index, "### %s %s: %s\n\n[%s.pb.gz](%s.pb.gz)", rp.Table.Pkg, rp.Row.Name, rp.Row.Verdict, name, name)
		if err := profdelta.FlameGraph(&html, p, rp.Delta.Comm); err != nil {
			fmt.Fprintf(&index, " (no flame graph: %v)\n\n", err)
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, name+".html"), html.Bytes(), 0o666); err != nil {
			return "", err
		}
		fmt.Fprintf(&index, ", [flame graph](%s.html)\n\n", name)
	}
	return index.String(), nil
}

// WriteSeriesPlots draws, into dir, one picture per row (its boot
// medians by kernel, each change marked), each as SVG and PNG, and
// index.md naming them: the rows with a change point first, then the
// rows without one with the change they could have seen, so that a
// series that found nothing still shows what it measured. Untested
// rows get none.
func WriteSeriesPlots(dir string, r *SeriesReport) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var index strings.Builder
	index.WriteString("# kbcompare -series plots\n\nKernels, in series order: ")
	for k, l := range r.Kernels {
		if k > 0 {
			index.WriteString(", ")
		}
		fmt.Fprintf(&index, "%d `%s`", k+1, l.Label)
	}
	index.WriteString(".\n\nEach picture is one row: a dot per boot median, the dash across a kernel " +
		"its center, a red line where the series changed, the gray dashed lines the centers of the segments between changes.\n")
	n := 0
	for _, changed := range []bool{true, false} {
		if changed {
			index.WriteString("\n# Rows with a change point\n\n")
		} else {
			index.WriteString("\n# Rows without a change\n\n")
		}
		drawn := 0
		for _, row := range r.Rows {
			res := row.res
			if (len(res.Changes) > 0) != changed || res.Untested != "" {
				continue
			}
			n++
			drawn++
			name := fmt.Sprintf("series-%03d-%s", n, fileSafe(row.Package+"-"+row.Name+"-"+row.Unit))
			if err := seriesPlot(dir, name, r, row); err != nil {
				return err
			}
			var what string
			if changed {
				var cs []string
				for _, c := range row.Changes {
					cs = append(cs, fmt.Sprintf("between %s and %s %s [%s, %s] (q %.2g)", c.From, c.To,
						pct(float64(c.Ratio)-1), pct(float64(c.Lo)-1), pct(float64(c.Hi)-1), c.Q))
				}
				what = strings.Join(cs, "; ")
			} else {
				what = fmt.Sprintf("no change; it could have seen %s (a step in the middle) / %s (before the last kernel) at 80%% power",
					formatMDE(res.MDE), formatMDE(res.MDEEnd))
			}
			fmt.Fprintf(&index, "## %s (%s)\n\n%s.\n\n![%s](%s.png) ([svg](%s.svg))\n\n", row.title(), row.Unit, what, name, name, name)
		}
		if drawn == 0 {
			index.WriteString("None.\n")
		}
	}
	return os.WriteFile(filepath.Join(dir, "index.md"), []byte(index.String()), 0o644)
}

// seriesPlot draws row i of the series.
func seriesPlot(dir, name string, r *SeriesReport, sr *SeriesRow) error {
	row, res := sr.row, sr.res
	scaler := benchunit.CommonScale(res.Centers, benchunit.ClassOf(row.Unit))
	p := plot.New()
	var cs []string
	for _, c := range res.Changes {
		cs = append(cs, fmt.Sprintf("%s after %s", pct(c.Ratio-1), r.Kernels[c.After].Label))
	}
	if len(cs) == 0 {
		cs = append(cs, "no change, mde "+formatMDE(res.MDE))
	}
	p.Title.Text = fmt.Sprintf("%s\n%s: %s", sr.title(), row.Unit, strings.Join(cs, ", "))
	dir1 := "unknown direction"
	if row.Better != 0 {
		dir1 = dirWord(row.Better) + " is better"
	}
	p.Y.Label.Text = fmt.Sprintf("%s (%s)", axisUnit(row.Unit, scaler), dir1)
	p.X.Label.Text = "kernel; dots: boot medians, dash: a kernel's center, red: a change"
	lo, hi := math.Inf(1), math.Inf(-1)
	for k, meds := range row.Medians {
		if len(meds) == 0 {
			continue
		}
		if err := dotColumn(p, float64(k), 0.2, 0.3, meds, res.Centers[k], scaler.Factor, oldColor, 2.5, &lo, &hi); err != nil {
			return err
		}
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
		if err := addLine(p, draw.LineStyle{Color: grayColor, Width: vg.Points(1.5), Dashes: dashes}, plotter.XY{X: float64(a) - 0.45, Y: m}, plotter.XY{X: float64(z) + 0.45, Y: m}); err != nil {
			return err
		}
	}
	for _, c := range res.Changes {
		x := float64(c.After) + 0.5
		if err := addLine(p, draw.LineStyle{Color: worseColor, Width: vg.Points(2)}, plotter.XY{X: x, Y: lo}, plotter.XY{X: x, Y: hi}); err != nil {
			return err
		}
	}
	var labels []string
	for _, k := range r.Kernels {
		labels = append(labels, k.Label)
	}
	p.NominalX(labels...)
	if lo > 0 && lo < 0.5*hi {
		p.Y.Min = 0
	}
	w := vg.Length(max(7, 0.9*float64(len(row.Medians)))) * vg.Inch
	return saveBoth(p, dir, name, min(w, 14*vg.Inch), 4.5*vg.Inch)
}
