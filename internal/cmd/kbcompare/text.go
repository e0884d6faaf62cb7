package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"golang.org/x/perf/benchunit"
)

// width is the most columns the text report uses: it must fit an e-mail.
const width = 100

// cells are a row's formatted columns, shared by text and markdown.
type cells struct {
	old, new, change, p, n, verdict string
}

func formatRow(t *Table, row *Row) cells {
	var centers []float64
	if row.Old != nil {
		centers = append(centers, row.OldSum.Center)
	}
	if row.New != nil {
		centers = append(centers, row.NewSum.Center)
	}
	// One scale for the row, as benchstat's RowScaler.
	scaler := benchunit.CommonScale(centers, benchunit.ClassOf(t.Unit))
	c := cells{old: "-", new: "-", change: "-", p: "-", verdict: string(row.Verdict)}
	if row.Old != nil {
		c.old = scaler.Format(row.OldSum.Center) + " ± " + row.OldSum.PctRangeString()
	}
	if row.New != nil {
		c.new = scaler.Format(row.NewSum.Center) + " ± " + row.NewSum.PctRangeString()
	}
	switch {
	case row.Old == nil || row.New == nil:
		var n int
		if row.Old != nil {
			n = len(row.Old.Values)
		} else {
			n = len(row.New.Values)
		}
		c.n = fmt.Sprint(n)
		return c
	case math.IsInf(row.Change, 0):
		c.change = "?"
	default:
		c.change = fmt.Sprintf("%+.2f%%", 100*row.Change)
	}
	// As benchstat prints them: "p=0.000 n=10", "n=10+8".
	c.p, c.n = fmt.Sprintf("%.3f", row.Cmp.P), fmt.Sprint(row.Cmp.N1)
	if row.Cmp.N1 != row.Cmp.N2 {
		c.n += fmt.Sprintf("+%d", row.Cmp.N2)
	}
	return c
}

func runes(s string) int { return utf8.RuneCountInString(s) }

func pad(s string, w int, right bool) string {
	fill := strings.Repeat(" ", max(0, w-runes(s)))
	if right {
		return fill + s
	}
	return s + fill
}

// wrap breaks s into lines of at most w runes, at spaces where it can.
func wrap(s string, w int) []string {
	if s == "" {
		return []string{""}
	}
	var lines []string
	for runes(s) > w {
		r := []rune(s)
		cut := strings.LastIndex(string(r[:w+1]), " ")
		if cut <= 0 {
			lines = append(lines, string(r[:w]))
			s = string(r[w:])
			continue
		}
		lines = append(lines, s[:cut])
		s = strings.TrimLeft(s[cut:], " ")
	}
	return append(lines, s)
}

func absent(s string) string {
	if s == "" {
		return "(absent)"
	}
	return s
}

func writeText(w io.Writer, r *Report) error {
	var b strings.Builder
	b.WriteString("kbcompare\n")
	for _, l := range wrap("old: "+r.Old, width-2) {
		b.WriteString("  " + l + "\n")
	}
	for _, l := range wrap("new: "+r.New, width-2) {
		b.WriteString("  " + l + "\n")
	}
	b.WriteString("\n")
	writeSetupText(&b, r)
	done := attributed{}
	for _, t := range r.Tables {
		b.WriteString("\n")
		writeTableText(&b, r, t, done)
	}
	b.WriteString("\n")
	writeSummary(&b, r)
	_, err := io.WriteString(w, b.String())
	return err
}

func writeSetupText(b *strings.Builder, r *Report) {
	if len(r.Setup) == 0 {
		fmt.Fprintf(b, "setup: all %d fingerprint and configuration lines equal\n", r.SetupEqual)
		return
	}
	fmt.Fprintf(b, "setup: %s, %d equal\n", plural(len(r.Setup), "line differs", "lines differ"), r.SetupEqual)
	keyW := 0
	for _, d := range r.Setup {
		keyW = max(keyW, min(runes(d.Key), 32))
	}
	// "  key  old  new", each value column half of what is left.
	valW := (width - 2 - keyW - 4) / 2
	fmt.Fprintf(b, "  %s  %s  %s\n", pad("", keyW, false), pad("old", valW, false), "new")
	for _, d := range r.Setup {
		keys := wrap(d.Key, keyW)
		olds, news := wrap(absent(d.Old), valW), wrap(absent(d.New), valW)
		for i := range max(len(keys), len(olds), len(news)) {
			line := "  " + pad(at(keys, i), keyW, false) + "  " + pad(at(olds, i), valW, false) + "  " + at(news, i)
			b.WriteString(strings.TrimRight(line, " ") + "\n")
		}
	}
}

func writeLines(b *strings.Builder, lines []string) {
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
}

func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return ""
}

func writeTableText(b *strings.Builder, r *Report, t *Table, done attributed) {
	title := t.Pkg
	if t.Ident != "" {
		title += " (" + t.Ident + ")"
	}
	fmt.Fprintf(b, "%s  %s (%s)\n", title, t.Unit, t.direction())
	head := cells{old: "old", new: "new", change: "change", p: "p", n: "n", verdict: "verdict"}
	rows := []cells{head}
	names := []string{"benchmark"}
	var notes []string
	for _, row := range t.Rows {
		c := formatRow(t, row)
		c.verdict += footnotes(&notes, row.Warnings)
		rows = append(rows, c)
		names = append(names, row.Name)
	}
	var wo, wn, wc, wp, wN, wv, nameW int
	for i, c := range rows {
		wo, wn, wc = max(wo, runes(c.old)), max(wn, runes(c.new)), max(wc, runes(c.change))
		wp, wN, wv = max(wp, runes(c.p)), max(wN, runes(c.n)), max(wv, runes(c.verdict))
		nameW = max(nameW, runes(names[i]))
	}
	nums := func(c cells) string {
		return pad(c.old, wo, true) + "  " + pad(c.new, wn, true) + "  " + pad(c.change, wc, true) +
			"  " + pad(c.p, wp, true) + "  " + pad(c.n, wN, true) + "  " + c.verdict
	}
	if nameW+2+wo+wn+wc+wp+wN+wv+10 <= width {
		for i, c := range rows {
			b.WriteString(strings.TrimRight(pad(names[i], nameW, false)+"  "+nums(c), " ") + "\n")
			if i > 0 {
				writeLines(b, attrText(r, done, t, t.Rows[i-1]))
			}
		}
	} else {
		// Long names get a line of their own, the numbers the next one.
		b.WriteString(strings.TrimRight("    "+nums(rows[0]), " ") + "\n")
		for i, c := range rows[1:] {
			b.WriteString(names[i+1] + "\n")
			b.WriteString(strings.TrimRight("    "+nums(c), " ") + "\n")
			writeLines(b, attrText(r, done, t, t.Rows[i]))
		}
	}
	for i, msg := range notes {
		fmt.Fprintf(b, "[%d] %s\n", i+1, msg)
	}
}

// footnotes numbers each warning in notes, adding those not yet there,
// and returns the marks (" [1] [3]") to append to a row's verdict.
func footnotes(notes *[]string, warnings []string) string {
	var marks string
	for _, msg := range warnings {
		i := slices.Index(*notes, msg)
		if i < 0 {
			i = len(*notes)
			*notes = append(*notes, msg)
		}
		marks += fmt.Sprintf(" [%d]", i+1)
	}
	return marks
}

// writeSummary ends both formats: the rule, the counts, and what is worse.
func writeSummary(b *strings.Builder, r *Report) {
	fmt.Fprintf(b, "verdict: better or worse when p <= %g (Mann-Whitney U) and the change is at least %g%%;\n",
		r.Opts.Alpha, 100*r.Opts.Threshold)
	fmt.Fprintf(b, "centers are medians with their %g%% confidence intervals (as benchstat prints them).\n", 100*confidence)
	fmt.Fprintf(b, "%d worse, %d better, %d changed, %d ~, %d old only, %d new only\n",
		r.Count(Worse), r.Count(Better), r.Count(Changed), r.Count(Same), r.Count(OldOnly), r.Count(NewOnly))
	if n := r.undecidable(); n > 0 {
		fmt.Fprintf(b, "%s too few samples to call any change significant: use -count=10\n",
			plural(n, "row has", "rows have"))
	}
	for _, t := range r.Tables {
		for _, row := range t.Rows {
			if row.Verdict == Worse {
				line := fmt.Sprintf("worse: %s %s %s %+.2f%%", t.Pkg, row.Name, t.Unit, 100*row.Change)
				b.WriteString(strings.Join(wrap(line, width), "\n  ") + "\n")
			}
		}
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
