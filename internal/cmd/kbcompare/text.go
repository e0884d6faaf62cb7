//go:build linux

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
	within, between                 string // boot mode only
	mde, need                       string // compared rows
}

func formatRow(t *Table, row *Row) cells {
	var centers []float64
	if row.Old != nil {
		centers = append(centers, row.OldSum.Center)
	}
	if row.New != nil {
		centers = append(centers, row.NewSum.Center)
	}
	if b := row.Boot; b != nil {
		centers = []float64{b.OldCenter, b.NewCenter}
	}
	// One scale for the row, as benchstat's RowScaler.
	scaler := benchunit.CommonScale(centers, benchunit.ClassOf(t.Unit))
	c := cells{old: "-", new: "-", change: "-", p: "-", verdict: string(row.Verdict), within: "-", between: "-", mde: "-", need: "-"}
	if pw := row.Power; pw != nil {
		c.mde, c.need = formatMDE(pw.MDE), formatNeed(pw.Need)
	}
	if b := row.Boot; b != nil {
		// Boots as samples: centers of the per-boot medians, Welch's p,
		// n in boots, and the two spreads.
		c.old, c.new = scaler.Format(b.OldCenter), scaler.Format(b.NewCenter)
		c.change = fmt.Sprintf("%+.2f%%", 100*row.Change)
		if math.IsInf(row.Change, 0) {
			c.change = "?"
		}
		c.p, c.n = fmt.Sprintf("%.3f", b.P), fmt.Sprintf("%d+%d", b.N1, b.N2)
		c.within, c.between = spread(b.Within), spread(b.Between)
		return c
	}
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

// geomeanText is a table's geomean line, as benchstat prints one, with
// the unit's direction: "" for a table without one.
func geomeanText(t *Table) string {
	g := t.Geomean
	if g == nil {
		return ""
	}
	scaler := benchunit.CommonScale([]float64{g.Old, g.New}, benchunit.ClassOf(t.Unit))
	return fmt.Sprintf("geomean of %d rows: %s -> %s, %+.2f%% (%s)", g.Rows, scaler.Format(g.Old),
		scaler.Format(g.New), 100*g.Change, t.direction())
}

// formatMDE formats a minimum detectable effect.
func formatMDE(m float64) string {
	switch {
	case math.IsInf(m, 1):
		return "∞"
	case m >= 9.995:
		return ">999%"
	case m >= 0.0995:
		return fmt.Sprintf("%.0f%%", 100*m)
	}
	return fmt.Sprintf("%.1f%%", 100*m)
}

// formatNeed formats how many boots or samples a side would detect the
// threshold.
func formatNeed(n int) string {
	if n == 0 {
		return fmt.Sprintf(">%d", maxNeed)
	}
	return fmt.Sprint(n)
}

// spread formats a relative standard deviation as benchstat formats ranges.
func spread(sd float64) string {
	switch {
	case math.IsNaN(sd):
		return "-"
	case sd >= 0.0995:
		return fmt.Sprintf("±%.0f%%", 100*sd)
	}
	return fmt.Sprintf("±%.1f%%", 100*sd)
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
	b.WriteString("\n")
	for _, l := range bootsHeader(r) {
		for _, w := range wrap(l, width) {
			b.WriteString(w + "\n")
		}
	}
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
	head := cells{old: "old", new: "new", change: "change", p: "p", n: "n", verdict: "verdict", within: "within", between: "between", mde: "mde", need: "need"}
	if r.BootMode {
		head.n = "boots"
	}
	rows := []cells{head}
	names := []string{"benchmark"}
	var notes []string
	for _, row := range t.Rows {
		c := formatRow(t, row)
		c.verdict += footnotes(&notes, row.Warnings)
		rows = append(rows, c)
		names = append(names, row.Name)
	}
	var wo, wn, wc, wp, wN, wv, wi, wb, wm, wd, nameW int
	for i, c := range rows {
		wm, wd = max(wm, runes(c.mde)), max(wd, runes(c.need))
		wo, wn, wc = max(wo, runes(c.old)), max(wn, runes(c.new)), max(wc, runes(c.change))
		wp, wN, wv = max(wp, runes(c.p)), max(wN, runes(c.n)), max(wv, runes(c.verdict))
		wi, wb = max(wi, runes(c.within)), max(wb, runes(c.between))
		nameW = max(nameW, runes(names[i]))
	}
	extra := wm + wd + 4
	if r.BootMode {
		extra += wi + wb + 4
	}
	nums := func(c cells) string {
		s := pad(c.old, wo, true) + "  " + pad(c.new, wn, true) + "  " + pad(c.change, wc, true) +
			"  " + pad(c.p, wp, true) + "  " + pad(c.n, wN, true) + "  "
		if r.BootMode {
			s += pad(c.within, wi, true) + "  " + pad(c.between, wb, true) + "  "
		}
		return s + pad(c.mde, wm, true) + "  " + pad(c.need, wd, true) + "  " + c.verdict
	}
	if nameW+2+wo+wn+wc+wp+wN+wv+10+extra <= width {
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
	if l := geomeanText(t); l != "" {
		b.WriteString(l + "\n")
	}
	for i, msg := range notes {
		for j, l := range wrap(fmt.Sprintf("[%d] %s", i+1, msg), width) {
			if j > 0 {
				l = "    " + l
			}
			b.WriteString(l + "\n")
		}
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
	if r.BootMode {
		fmt.Fprintf(b, "verdict: better or worse when p <= %g (Welch's t-test on the logs of per-boot medians,\n", r.Opts.Alpha)
		fmt.Fprintf(b, "n counts boots) and the change is at least %g%%; centers are geometric means of per-boot\n", 100*r.Opts.Threshold)
		b.WriteString("medians; within and between are the spread of samples in a boot and of boot medians.\n")
	} else {
		fmt.Fprintf(b, "verdict: better or worse when p <= %g (Mann-Whitney U) and the change is at least %g%%;\n",
			r.Opts.Alpha, 100*r.Opts.Threshold)
		fmt.Fprintf(b, "centers are medians with their %g%% confidence intervals (as benchstat prints them).\n", 100*confidence)
	}
	unit := "samples"
	if r.BootMode {
		unit = "boots"
	}
	spread := "of samples"
	if r.BootMode {
		spread = "between boots"
	}
	fmt.Fprintf(b, "mde: the change this test detects with %.0f%% power, from the spread %s and n;\n", 100*targetPower, spread)
	fmt.Fprintf(b, "need: %s a side to detect %g%%. A ~ row whose mde exceeds %g%% is underpowered: no evidence\n",
		unit, 100*r.Opts.Threshold, 100*r.Opts.Threshold)
	b.WriteString("of no change.\n")
	fmt.Fprintf(b, "%d worse, %d better, %d changed, %d ~, %d underpowered, %d old only, %d new only\n",
		r.Count(Worse), r.Count(Better), r.Count(Changed), r.Count(Same), r.Count(Underpowered), r.Count(OldOnly), r.Count(NewOnly))
	if n := r.Failures(); n > 0 {
		fmt.Fprintf(b, "%d failed, %d skipped on one side, %d other failures: nothing here is \"nothing worse\"\n",
			r.Count(Failed), r.Count(Skipped), len(r.Problems))
	}
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
	for _, t := range r.Tables {
		for _, row := range t.Rows {
			if row.Verdict == Underpowered {
				line := fmt.Sprintf("underpowered: %s %s %s could not have seen %g%%: mde %s, need %s %s",
					t.Pkg, row.Name, t.Unit, 100*r.Opts.Threshold, formatMDE(row.Power.MDE), formatNeed(row.Power.Need), unit)
				b.WriteString(strings.Join(wrap(line, width), "\n  ") + "\n")
			}
		}
	}
	for _, t := range r.Tables {
		for _, row := range t.Rows {
			if row.Verdict == Failed || row.Verdict == Skipped {
				line := fmt.Sprintf("%s: %s %s %s: %s", strings.ToLower(string(row.Verdict)), t.Pkg, row.Name, t.Unit, row.Why)
				b.WriteString(strings.Join(wrap(line, width), "\n  ") + "\n")
			}
		}
	}
	for _, p := range r.Problems {
		line := fmt.Sprintf("failed: %s %s %s: %s", p.Side, p.Pkg, p.Name, p.What)
		b.WriteString(strings.Join(wrap(line, width), "\n  ") + "\n")
	}
}

// bootsHeader says how many boots each side holds and what that means for
// the statistics, and warns about protect pulses earlier in a boot.
func bootsHeader(r *Report) []string {
	var lines []string
	n := func(side int) string { return plural(r.Boots[side], "boot", "boots") }
	switch {
	case r.BootMode:
		lines = append(lines, fmt.Sprintf("boots: old %s, new %s. Boots are the samples: a row's center is the "+
			"geometric mean of its per-boot medians, p is Welch's t-test on their logs, and n counts boots, "+
			"so a layout shift between boots is part of the noise a change must stand out from.", n(0), n(1)))
	case r.Boots[0] == 1 || r.Boots[1] == 1:
		lines = append(lines, fmt.Sprintf("boots: old %s, new %s. Boot-to-boot variation is unmeasured: "+
			"samples of one boot share its layout (KASLR, code and data placement), so a change below can be "+
			"layout, not the kernel. Boot each kernel %d times or more (docs/comparing.md).",
			n(0), n(1), MinBoots))
	default:
		lines = append(lines, fmt.Sprintf("boots: old %s, new %s: too few to use boots as samples (%d each); "+
			"the statistics below are per sample and a change can be layout, not the kernel.", n(0), n(1), MinBoots))
	}
	for side, name := range []string{"old", "new"} {
		for _, p := range r.Pulses[side] {
			lines = append(lines, fmt.Sprintf("warning: %s, %s: later rows of that boot are contaminated "+
				"(docs/pulses.md)", name, p))
		}
	}
	return lines
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
