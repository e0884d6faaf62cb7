//go:build linux

package abreport

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/kbench/kbench/internal/abseries"
)

// SeriesReport is a series' report record, made once (NewSeries) from
// the series and its change points: the text form and the pictures
// render it, -series -format json writes its fields (schema
// kbcompare-series/1, docs/kbcompare.md), Exit is its status.
type SeriesReport struct {
	Schema  string         `json:"schema"`
	Alpha   float64        `json:"alpha"`
	Kernels []seriesKernel `json:"kernels"`
	Rows    []*SeriesRow   `json:"rows"`
	Summary seriesSummary  `json:"summary"`
	Run     *SeriesRun     `json:"-"` // kbab -series' run; nil for kbcompare
	opts    abseries.Options
}

type seriesKernel struct {
	Label string `json:"label"`
	File  string `json:"file"`
}

// SeriesRow is a row's change points over the series, or why it was
// not tested.
type SeriesRow struct {
	Package   string         `json:"package"`
	Ident     string         `json:"ident,omitempty"`
	Name      string         `json:"name"`
	Unit      string         `json:"unit"`
	Direction string         `json:"direction"`
	Boots     []int          `json:"boots"`
	Centers   []Num          `json:"centers"`
	P         Num            `json:"p"`
	Q         Num            `json:"q"`
	Changes   []seriesChange `json:"changes"`
	MDE       Num            `json:"mde"`
	MDEEnd    Num            `json:"mde_end"`
	Sigma     Num            `json:"sigma"`
	Untested  string         `json:"untested,omitempty"`
	Kernel    string         `json:"untested_kernel,omitempty"`
	Notes     []string       `json:"notes,omitempty"`
	row       abseries.SeriesRow
	res       abseries.RowResult
}

type seriesChange struct {
	After   int    `json:"after"`
	From    string `json:"from"`
	To      string `json:"to"`
	Ratio   Num    `json:"ratio"`
	Lo      Num    `json:"ratio_lo"`
	Hi      Num    `json:"ratio_hi"`
	P       Num    `json:"p"`
	Q       Num    `json:"q"`
	Verdict string `json:"verdict"`
}

type seriesSummary struct {
	Rows     int `json:"rows"`
	Changed  int `json:"changed"`
	Untested int `json:"untested"`
	Exit     int `json:"exit"`
}

// NewSeries makes the record of series s, its rows' results (by row of
// s) and the options they were found with.
func NewSeries(s *abseries.Series, results []abseries.RowResult, o abseries.Options) *SeriesReport {
	r := &SeriesReport{Schema: "kbcompare-series/1", Alpha: o.Alpha, Rows: []*SeriesRow{}, opts: o}
	for k, l := range s.Labels {
		r.Kernels = append(r.Kernels, seriesKernel{l, s.Files[k]})
	}
	for i, row := range s.Rows {
		res := results[i]
		mr := &SeriesRow{Package: row.Pkg, Ident: row.Ident, Name: row.Name, Unit: row.Unit, Direction: dirWord(row.Better),
			P: Num(res.P), Q: Num(res.Q), Changes: []seriesChange{}, MDE: Num(res.MDE), MDEEnd: Num(res.MDEEnd),
			Sigma: Num(res.Sigma), Untested: res.Untested, Centers: []Num{}, Notes: rowNotes(s, res, o, len(results)), row: row, res: res}
		for _, b := range row.Medians {
			mr.Boots = append(mr.Boots, len(b))
		}
		for _, c := range res.Centers {
			mr.Centers = append(mr.Centers, Num(c))
		}
		if res.Kernel >= 0 {
			mr.Kernel = s.Labels[res.Kernel]
		}
		for _, c := range res.Changes {
			v := changeWord(c.Ratio, row.Better)
			if c.Small {
				v = "below -threshold"
			}
			mr.Changes = append(mr.Changes, seriesChange{c.After, s.Labels[c.After], s.Labels[c.After+1], Num(c.Ratio), Num(c.Lo), Num(c.Hi),
				Num(c.P), Num(c.Q), v})
		}
		if res.Untested != "" {
			r.Summary.Untested++
		}
		if len(res.Changes) > 0 {
			r.Summary.Changed++
		}
		r.Rows = append(r.Rows, mr)
	}
	r.Summary.Rows, r.Summary.Exit = len(s.Rows), r.Exit()
	return r
}

// title names a series row: its package, configuration, name.
func (row *SeriesRow) title() string {
	return tableTitle(&Row{Package: row.Package, Ident: row.Ident}) + " " + row.Name
}

// changeWord is "worse", "better" or "changed" for a ratio of a row's
// unit whose direction is better (+1 higher, -1 lower, 0 unknown).
func changeWord(ratio float64, better int) string {
	switch {
	case better == 0:
		return "changed"
	case (ratio > 1) == (better > 0):
		return "better"
	}
	return "worse"
}

// rowNotes are what a series row's numbers alone do not say: a step
// the boots cannot reach at the row's level, a kernel's own offset
// named instead of a change, a drift that fits better than a step.
func rowNotes(s *abseries.Series, res abseries.RowResult, o abseries.Options, rows int) []string {
	var notes []string
	level := o.Alpha / float64(rows)
	switch {
	case res.Untested != "":
	case res.MinP > level:
		notes = append(notes, fmt.Sprintf("no change can be found: the smallest p a permutation of its boots gives is %s, above the level %s (alpha over the rows); more boots a kernel", pval(res.MinP), pval(level)))
	case res.MinPEnd > level:
		notes = append(notes, fmt.Sprintf("a step before the last kernel cannot be found: its smallest p is %s, above the level %s", pval(res.MinPEnd), pval(level)))
	}
	if res.Blip >= 0 {
		notes = append(notes, fmt.Sprintf("%s stands apart by %s: a kernel's own offset (a build's layout), not a change point", s.Labels[res.Blip], pctChange(res.BlipRatio-1)))
	}
	if res.Drift != 0 {
		notes = append(notes, fmt.Sprintf("drift: %s a kernel along the series fits better than one step", pctChange(res.Drift-1)))
	}
	return notes
}

// WriteSeriesText writes a series' report: the kernels, then per row
// with change points between which two kernels (by label), by how much
// with its interval, p and q; the rows without with their mde; the rows
// untested and why. A kbab run's report begins with its kernels and
// ends with where its pictures are.
func WriteSeriesText(w io.Writer, r *SeriesReport) error {
	var b strings.Builder
	if run := r.Run; run != nil {
		fmt.Fprintf(&b, "kbab -series %s: %d kernels, %d boots each, in balanced rounds\n", run.List, len(run.Kernels), run.Boots)
		for _, k := range run.Kernels {
			fmt.Fprintf(&b, "  %s: %s\n", k.Label, k.Boots)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "kbcompare -series: %s\n", plural(len(r.Kernels), "kernel", "kernels"))
	for k, l := range r.Kernels {
		b.WriteString(para(fmt.Sprintf("%d %s: %s", k+1, l.Label, l.File), Width-2, "  ", "  "))
	}
	b.WriteString("\n")
	writeWrapped(&b, "", fmt.Sprintf("change points: binary segmentation, the largest two-sample t over the kernel boundaries, "+
		"p the larger of a permutation of boots across kernels and a t allowing each kernel an offset of at least %g boot spreads, "+
		"q over %s, a change where q <= %g and at least -threshold %s", r.opts.Offset, plural(len(r.Rows), "row", "rows"), r.Alpha, formatMDE(r.opts.Threshold)))
	if r.Summary.Changed == 0 {
		b.WriteString("\nno row changed\n")
	}
	for _, row := range r.Rows {
		if len(row.Changes) == 0 {
			continue
		}
		b.WriteString("\n")
		writeWrapped(&b, "", fmt.Sprintf("%s (%s)", row.title(), row.Unit))
		for _, c := range row.Changes {
			writeWrapped(&b, "  ", fmt.Sprintf("between %s and %s: %s [%s, %s] %s  p=%s q=%s", c.From, c.To,
				pctChange(float64(c.Ratio)-1), pctChange(float64(c.Lo)-1), pctChange(float64(c.Hi)-1), c.Verdict, pval(float64(c.P)), pval(float64(c.Q))))
		}
		for _, n := range row.Notes {
			writeWrapped(&b, "  ", n)
		}
	}
	if n := len(r.Rows) - r.Summary.Untested - r.Summary.Changed; n > 0 {
		b.WriteString("\n")
		writeWrapped(&b, "", fmt.Sprintf("%s without a change, each with what it could have seen (mde at 80%% power: a step in the middle of the series / before the last kernel):",
			plural(n, "row", "rows")))
		for _, row := range r.Rows {
			if row.Untested != "" || len(row.Changes) > 0 {
				continue
			}
			writeWrapped(&b, "  ", fmt.Sprintf("%s  mde %s / %s  (boot medians %s)", row.title(), formatMDE(float64(row.MDE)), formatMDE(float64(row.MDEEnd)), spread(float64(row.Sigma))))
			for _, n := range row.Notes {
				writeWrapped(&b, "    ", n)
			}
		}
	}
	if n := r.Summary.Untested; n > 0 {
		fmt.Fprintf(&b, "\n%s untested:\n", plural(n, "row", "rows"))
		for _, row := range r.Rows {
			if row.Untested == "" {
				continue
			}
			why := row.Untested
			if row.Kernel != "" {
				why = row.Kernel + ": " + why
			}
			writeWrapped(&b, "  ", row.title()+": "+why)
		}
	}
	if r.Run != nil && r.Run.Pictures != "" {
		fmt.Fprintf(&b, "\npictures: %s (an .svg per row, its caption its title, the changed rows first)\n", r.Run.Pictures)
	}
	_, err := io.WriteString(w, printable(b.String()))
	return err
}

// writeWrapped writes s indented by indent, wrapped at Width, its
// continuation lines indented two more.
func writeWrapped(b *strings.Builder, indent, s string) {
	b.WriteString(para(s, Width-len(indent)-2, indent, indent+"  "))
}

// pval formats a p or q as the report does.
func pval(p float64) string {
	if math.IsNaN(p) {
		return "?"
	}
	return fmt.Sprintf("%.2g", p)
}
