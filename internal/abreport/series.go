//go:build linux

package abreport

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/kbench/kbench/internal/abseries"
)

// SeriesReport is a series' change points as the report shows them.
type SeriesReport struct {
	Series  *abseries.Series
	Results []abseries.RowResult // by row of Series
	Opts    abseries.Options
}

// rowTitle names a series row: its package, configuration, name.
func (r *SeriesReport) rowTitle(i int) string {
	row := r.Series.Rows[i]
	pkg := row.Pkg
	if row.Ident != "" {
		pkg += " (" + row.Ident + ")"
	}
	return pkg + " " + row.Name
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

// changeVerdict is a change point's word: changeWord's, or "below
// -threshold" where it is smaller than the size gate.
func changeVerdict(c abseries.Change, better int) string {
	if c.Small {
		return "below -threshold"
	}
	return changeWord(c.Ratio, better)
}

// rowNotes are what a series row's numbers alone do not say: a step
// the boots cannot reach at the row's level, a kernel's own offset
// named instead of a change, a drift that fits better than a step.
func (r *SeriesReport) rowNotes(i int) []string {
	res, s := r.Results[i], r.Series
	var notes []string
	level := r.Opts.Alpha / float64(len(r.Results))
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

// Changed counts the rows with a change point.
func (r *SeriesReport) Changed() int {
	n := 0
	for _, res := range r.Results {
		if len(res.Changes) > 0 {
			n++
		}
	}
	return n
}

// WriteSeriesText writes a series' report: the kernels, then per row
// with change points between which two kernels (by label), by how much
// with its interval, p and q; the rows without with their mde; the rows
// untested and why.
func WriteSeriesText(w io.Writer, r *SeriesReport) error {
	var b strings.Builder
	s := r.Series
	fmt.Fprintf(&b, "kbcompare -series: %s\n", plural(len(s.Labels), "kernel", "kernels"))
	for k, l := range s.Labels {
		b.WriteString(para(fmt.Sprintf("%d %s: %s", k+1, l, s.Files[k]), Width-2, "  ", "  "))
	}
	tested := 0
	for _, res := range r.Results {
		if res.Untested == "" {
			tested++
		}
	}
	b.WriteString("\n")
	writeWrapped(&b, "", fmt.Sprintf("change points: binary segmentation, the largest two-sample t over the kernel boundaries, "+
		"p the larger of a permutation of boots across kernels and a t allowing each kernel an offset of at least %g boot spreads, "+
		"q over %s, a change where q <= %g and at least -threshold %s", r.Opts.Offset, plural(len(r.Results), "row", "rows"), r.Opts.Alpha, formatMDE(r.Opts.Threshold)))
	if r.Changed() == 0 {
		b.WriteString("\nno row changed\n")
	}
	for i, res := range r.Results {
		if len(res.Changes) == 0 {
			continue
		}
		row := s.Rows[i]
		b.WriteString("\n")
		writeWrapped(&b, "", fmt.Sprintf("%s (%s)", r.rowTitle(i), row.Unit))
		for _, c := range res.Changes {
			writeWrapped(&b, "  ", fmt.Sprintf("between %s and %s: %s [%s, %s] %s  p=%s q=%s", s.Labels[c.After], s.Labels[c.After+1],
				pctChange(c.Ratio-1), pctChange(c.Lo-1), pctChange(c.Hi-1), changeVerdict(c, row.Better), pval(c.P), pval(c.Q)))
		}
		for _, n := range r.rowNotes(i) {
			writeWrapped(&b, "  ", n)
		}
	}
	if n := tested - r.Changed(); n > 0 {
		b.WriteString("\n")
		writeWrapped(&b, "", fmt.Sprintf("%s without a change, each with what it could have seen (mde at 80%% power: a step in the middle of the series / before the last kernel):",
			plural(n, "row", "rows")))
		for i, res := range r.Results {
			if res.Untested != "" || len(res.Changes) > 0 {
				continue
			}
			writeWrapped(&b, "  ", fmt.Sprintf("%s  mde %s / %s  (boot medians %s)", r.rowTitle(i), formatMDE(res.MDE), formatMDE(res.MDEEnd), spread(res.Sigma)))
			for _, n := range r.rowNotes(i) {
				writeWrapped(&b, "    ", n)
			}
		}
	}
	if n := len(r.Results) - tested; n > 0 {
		fmt.Fprintf(&b, "\n%s untested:\n", plural(n, "row", "rows"))
		for i, res := range r.Results {
			if res.Untested == "" {
				continue
			}
			why := res.Untested
			if res.Kernel >= 0 {
				why = s.Labels[res.Kernel] + ": " + why
			}
			writeWrapped(&b, "  ", r.rowTitle(i)+": "+why)
		}
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

// SeriesJSONReport is kbcompare -series' report for scripts (-format json): docs/kbcompare.md describes each field of
// it and of the types below. Numbers that are infinite or undefined are null.
type SeriesJSONReport struct {
	Schema  string          `json:"schema"`
	Alpha   float64         `json:"alpha"`
	Kernels []seriesKernel  `json:"kernels"`
	Rows    []seriesRowJSON `json:"rows"`
	Summary seriesSummary   `json:"summary"`
}

type seriesKernel struct {
	Label string `json:"label"`
	File  string `json:"file"`
}

type seriesRowJSON struct {
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

func seriesJSONReport(r *SeriesReport) *SeriesJSONReport {
	s := r.Series
	m := &SeriesJSONReport{Schema: "kbcompare-series/1", Alpha: r.Opts.Alpha, Rows: []seriesRowJSON{}}
	for k, l := range s.Labels {
		m.Kernels = append(m.Kernels, seriesKernel{l, s.Files[k]})
	}
	for i, row := range s.Rows {
		res := r.Results[i]
		mr := seriesRowJSON{Package: row.Pkg, Ident: row.Ident, Name: row.Name, Unit: row.Unit, Direction: dirWord(row.Better),
			P: Num(res.P), Q: Num(res.Q), Changes: []seriesChange{}, MDE: Num(res.MDE), MDEEnd: Num(res.MDEEnd),
			Sigma: Num(res.Sigma), Untested: res.Untested, Centers: []Num{}, Notes: r.rowNotes(i)}
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
			mr.Changes = append(mr.Changes, seriesChange{c.After, s.Labels[c.After], s.Labels[c.After+1], Num(c.Ratio), Num(c.Lo), Num(c.Hi),
				Num(c.P), Num(c.Q), changeVerdict(c, row.Better)})
		}
		if res.Untested != "" {
			m.Summary.Untested++
		}
		m.Rows = append(m.Rows, mr)
	}
	m.Summary.Rows, m.Summary.Changed, m.Summary.Exit = len(s.Rows), r.Changed(), r.Exit()
	return m
}

// WriteSeriesJSON writes the series report as JSON (SeriesJSONReport).
func WriteSeriesJSON(w io.Writer, r *SeriesReport) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(seriesJSONReport(r))
}
