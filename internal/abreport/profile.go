//go:build linux

package abreport

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/kbench/kbench/internal/abstat"
	"github.com/kbench/kbench/internal/kprofile"
	"github.com/kbench/kbench/internal/profdelta"
)

// RowProfile is one row's kernel profiles compared across boots, for
// the perf-profile section: the row (its primary unit's, for the verdict)
// and package profdelta's delta.
type RowProfile struct {
	Table *abstat.Table
	Row   *abstat.Row
	Delta *profdelta.Delta
	// Boots are the profiles Delta compares, old and new, for the
	// pictures of the difference.
	Boots [2][]profdelta.Boot
}

// ProfileLines is how many functions of each form the full text and
// markdown forms list a row; BriefProfileLines how many the brief form
// lists a row, both forms together.
const (
	ProfileLines      = 10
	BriefProfileLines = 3
)

// WriteProfileText writes the perf-profile section of the full report,
// LKP's shape: per row, for self and children, the functions whose share
// changed most against the spread of their per-boot shares, each as
// "old ± spread%  change  new ± spread%  function", shares and the
// change in percent of the row's samples, the spread the sd of the
// per-boot shares relative to their mean; then Welch's t over the boots
// and its q, by which the lines are ordered.
func WriteProfileText(w io.Writer, rows []RowProfile) error {
	var b strings.Builder
	b.WriteString("\nperf-profile: kernel functions whose share of a row's samples changed most against its spread\n" +
		"between boots; old ± sd%  change  new ± sd%: mean share in %, the sd of the per-boot shares\n" +
		"relative to the mean, the change in points; t: Welch's over the boots (ordered by |t|), q: its\n" +
		"Benjamini-Hochberg q among the row's functions; self: innermost frame, children: on the stack\n")
	for _, rp := range rows {
		b.WriteString("\n")
		writeLines(&b, profileHeader(rp, Width))
		for _, f := range rp.Delta.Forms() {
			fmt.Fprintf(&b, "  %s:\n", f.Form)
			if len(f.Funcs) == 0 {
				fmt.Fprintf(&b, "    no function reaches %s of the samples\n", sharePct(rp.Delta.MinShare))
				continue
			}
			b.WriteString("    " + profileCells(profileHead, Width-4) + "\n")
			for i, fn := range f.Funcs {
				if i == ProfileLines {
					fmt.Fprintf(&b, "    ... %d more (-format json lists them)\n", len(f.Funcs)-i)
					break
				}
				b.WriteString("    " + profileCells(funcCells(fn), Width-4) + "\n")
			}
		}
	}
	_, err := io.WriteString(w, printable(b.String()))
	return err
}

// WriteProfileBrief writes the brief form's perf-profile lines: a row's
// header and its BriefProfileLines functions of most |t|, self and
// children together.
func WriteProfileBrief(w io.Writer, rows []RowProfile) error {
	var lines []string
	add := func(s string) { lines = append(lines, fit(s, BriefWidth)) }
	add("perf-profile: old ± sd%, change, new ± sd% (share of samples, points), by |t|")
	for _, rp := range rows {
		for _, l := range profileHeader(rp, BriefWidth) {
			add(l)
		}
		for _, bf := range briefFuncs(rp.Delta) {
			add("  " + briefCells(bf.form, funcCells(bf.fn), BriefWidth-2))
		}
	}
	_, err := io.WriteString(w, printable(strings.Join(lines, "\n")+"\n"))
	return err
}

// WriteProfileMarkdown writes the perf-profile section as markdown
// tables, one per row and form.
func WriteProfileMarkdown(w io.Writer, rows []RowProfile) error {
	var b strings.Builder
	b.WriteString("\n## perf-profile\n\nKernel functions whose share of a row's samples changed most against its spread between boots: " +
		"mean share ± the sd of the per-boot shares (relative), the change in points, Welch's t over the boots (the order) and its q.\n")
	for _, rp := range rows {
		b.WriteString("\n### " + mdCell(strings.Join(profileHeader(rp, math.MaxInt), " ")) + "\n")
		for _, f := range rp.Delta.Forms() {
			fmt.Fprintf(&b, "\n%s:\n\n| old | change | new | t | q | function |\n|---:|---:|---:|---:|---:|---|\n", f.Form)
			for i, fn := range f.Funcs {
				if i == ProfileLines {
					break
				}
				c := funcCells(fn)
				fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | `%s` |\n", c[0], c[1], c[2], c[3], c[4], strings.ReplaceAll(fn.Name, "`", "'"))
			}
		}
	}
	_, err := io.WriteString(w, printable(b.String()))
	return err
}

type briefFunc struct {
	form profdelta.Form
	fn   profdelta.Func
}

// briefFuncs merges the two forms by |t| and keeps the first
// BriefProfileLines; a function first in both forms is listed once, as
// self.
func briefFuncs(d *profdelta.Delta) []briefFunc {
	var out []briefFunc
	i, j := 0, 0
	seen := map[string]bool{}
	for len(out) < BriefProfileLines && (i < len(d.Self) || j < len(d.Children)) {
		var bf briefFunc
		if j >= len(d.Children) || i < len(d.Self) && !(math.Abs(d.Children[j].T) > math.Abs(d.Self[i].T)) {
			bf = briefFunc{profdelta.Self, d.Self[i]}
			i++
		} else {
			bf = briefFunc{profdelta.Children, d.Children[j]}
			j++
		}
		if !seen[bf.fn.Name] {
			seen[bf.fn.Name] = true
			out = append(out, bf)
		}
	}
	return out
}

// profileHeader names the row, its verdict, how it was sampled and how
// many boots: lines of at most width.
func profileHeader(rp RowProfile, width int) []string {
	d := rp.Delta
	head := rp.Table.Pkg + " " + rp.Row.Name
	if rp.Row.Verdict != "" {
		head += " (" + verdictWord(rp.Row)
		if rp.Row.Old != nil && rp.Row.New != nil {
			head += " " + pctChange(rp.Row.Change)
		}
		head += ")"
	}
	frames := "kernel functions"
	if d.AllFrames {
		frames = "all functions"
	}
	how := fmt.Sprintf("%s, %d+%d boots, %s", samplingText(d), len(d.Boots[0]), len(d.Boots[1]), frames)

	if d.Empty[0]+d.Empty[1] > 0 {
		how += fmt.Sprintf(", %d+%d boots without samples left out", d.Empty[0], d.Empty[1])
	}
	if len(d.Boots[0]) < 2 || len(d.Boots[1]) < 2 {
		how += "; under 2 boots a side: no spread, no t"
	}
	var lines []string
	for _, l := range wrap("perf-profile "+head, width) {
		lines = append(lines, l)
	}
	for _, l := range wrap(how, width-2) {
		lines = append(lines, "  "+l)
	}
	if d.Comm != "" {
		for _, l := range wrap("samples of the threads whose comm matches "+d.Comm, width-2) {
			lines = append(lines, "  "+l)
		}
	}
	return lines
}

// samplingText names the event and rate, once where both sides agree.
func samplingText(d *profdelta.Delta) string {
	one := func(ss []kprofile.Sampling) string {
		var parts []string
		for _, s := range ss {
			t := s.Event
			if s.Hz > 0 {
				t += fmt.Sprintf(" at %d Hz per CPU", s.Hz)
			}
			if s.Scope != "" {
				t += ", " + s.Scope
			}
			parts = append(parts, t)
		}
		return strings.Join(parts, " and ")
	}
	o, n := one(d.Sampling[0]), one(d.Sampling[1])
	if o == n {
		return o
	}
	return "old " + o + ", new " + n + " (sampled differently)"
}

var profileHead = []string{"old", "change", "new", "t", "q", "function"}

// funcCells are a function's cells: old, change, new, t, q, name.
func funcCells(f profdelta.Func) []string {
	t, q := "-", "-"
	if !math.IsNaN(f.T) {
		t = fmt.Sprintf("%.1f", f.T)
		q = fmt.Sprintf("%.3f", f.Q)
		if math.IsInf(f.T, 0) {
			t = fmt.Sprintf("%+.0f", f.T)
		}
	}
	return []string{shareText(f.Old), fmt.Sprintf("%+.2f", 100*f.Change), shareText(f.New), t, q, f.Name}
}

// shareText is LKP's "1.51 ± 7%": the mean share in percent, the sd of
// the per-boot shares relative to it; no "±" for a zero mean or one
// boot.
func shareText(s profdelta.Share) string {
	v := fmt.Sprintf("%.2f", 100*s.Mean)
	if r := s.RSD(); !math.IsNaN(r) {
		v += fmt.Sprintf(" ± %2.0f%%", 100*r)
	}
	return v
}

func sharePct(x float64) string { return fmt.Sprintf("%.2g%%", 100*x) }

// profileCells lays out a function's cells (funcCells, or profileHead)
// in fixed columns, the numbers right-aligned, the name fit into what is
// left of width.
func profileCells(c []string, width int) string {
	var b strings.Builder
	for i, w := range []int{12, 8, 12, 7, 6} {
		b.WriteString(pad(c[i], w, true) + "  ")
	}
	return b.String() + fit(c[len(c)-1], max(width-runes(b.String()), 8))
}

// briefCells is the brief form's narrower line: the form, old, change,
// new, t and the name.
func briefCells(form profdelta.Form, c []string, width int) string {
	var b strings.Builder
	b.WriteString(pad(map[profdelta.Form]string{profdelta.Self: "self", profdelta.Children: "child"}[form], 5, false) + " ")
	for i, w := range []int{12, 7, 12, 6} {
		b.WriteString(pad(c[i], w, true) + "  ")
	}
	return b.String() + fit(c[len(c)-1], max(width-runes(b.String()), 8))
}
