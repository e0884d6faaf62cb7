//go:build linux

package abreport

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/kbench/kbench/internal/abmath"
	"github.com/kbench/kbench/internal/abstat"
)

// Width is the most columns the full text report uses: it must fit an
// e-mail.
const Width = 100

// WriteText writes the full report: the setup lines that differ, a table
// per package and unit with every row, the counters under each row, and
// the summary; then kbab's notes of its run (writeRun) or the
// perf-profile section.
func WriteText(w io.Writer, a *AB) error {
	var b strings.Builder
	b.WriteString("kbcompare\n")
	b.WriteString(para("old: "+a.Old, Width-2, "  ", "  ") + para("new: "+a.New, Width-2, "  ", "  ") + "\n")
	writeSetupText(&b, a)
	b.WriteString("\n")
	for _, l := range bootsHeader(a) {
		b.WriteString(para(l, Width, "", ""))
	}
	done := map[[3]string]bool{}
	for _, t := range a.tables() {
		b.WriteString("\n")
		writeTableText(&b, a, t, done)
	}
	b.WriteString("\n")
	writeSummary(&b, a)
	if a.Run != nil {
		writeRun(&b, a)
	} else if len(a.Profiles) > 0 {
		writeProfileText(&b, a.Profiles)
	}
	_, err := io.WriteString(w, printable(b.String()))
	return err
}

func writeSetupText(b *strings.Builder, r *AB) {
	if len(r.Setup) == 0 {
		fmt.Fprintf(b, "setup: all %d fingerprint and configuration lines equal\n", r.SetupEqual)
		return
	}
	fmt.Fprintf(b, "setup: %s, %d equal\n", plural(len(r.Setup), "line differs", "lines differ"), r.SetupEqual)
	keyW := 1
	for _, d := range r.Setup {
		keyW = max(keyW, min(runes(d.Key), 32))
	}
	// "  key  old  new", each value column half of what is left.
	valW := (Width - 2 - keyW - 4) / 2
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

func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return ""
}

// tables are the record's rows by table: the runs of rows of one
// package, configuration and unit.
func (a *AB) tables() [][]*Row {
	var out [][]*Row
	for i, row := range a.Rows {
		if p := a.Rows[max(i-1, 0)]; i == 0 || p.Package != row.Package || p.Ident != row.Ident || p.Unit != row.Unit {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], row)
	}
	return out
}

func writeTableText(b *strings.Builder, r *AB, t []*Row, done map[[3]string]bool) {
	fmt.Fprintf(b, "%s  %s (%s)\n", tableTitle(t[0]), t[0].Unit, direction(t[0]))
	rows, notes := tableRows(r, t)
	lines, w := align(rows, 1)
	narrow := w > Width
	if narrow { // long names get a line of their own, the numbers the next one
		var nums [][]string
		for _, row := range rows {
			nums = append(nums, row[1:])
		}
		lines, _ = align(nums, 0)
	}
	for i, l := range lines {
		if narrow {
			if i > 0 {
				b.WriteString(rows[i][0] + "\n")
			}
			l = "    " + l
		}
		b.WriteString(l + "\n")
		if i > 0 {
			b.WriteString(attrText(done, t[i-1]))
		}
	}
	if l := geomeanText(r, t[0]); l != "" {
		b.WriteString(l + "\n")
	}
	for i, msg := range notes {
		b.WriteString(para(fmt.Sprintf("[%d] %s", i+1, msg), Width, "", "    "))
	}
}

// ruleLines say how a report's verdicts are decided, for its summary;
// each fits Width.
func ruleLines(r *AB) []string {
	a, th := r.Alpha, 100*r.Threshold
	rows := plural(r.Summary.Family, "row compared", "rows compared")
	lines := []string{fmt.Sprintf("verdict: better or worse when q <= %g and the change is at least %g%%, one verdict per row;", a, th),
		fmt.Sprintf("q is Benjamini-Hochberg's over the %s, from p", rows)}
	if r.BootMode {
		lines[len(lines)-1] += " (Welch's t-test on the logs of"
		lines = append(lines, "per-boot medians, n counts boots). Centers are geometric means of per-boot medians; within and",
			"between are the spread of samples in a boot and of boot medians.")
	} else {
		lines[len(lines)-1] += " (Mann-Whitney U) per sample;"
		lines = append(lines, fmt.Sprintf("centers are medians with their %g%% confidence intervals (as benchstat prints them).", 100*abmath.Confidence))
	}
	return append(lines, "A row is judged in its primary unit (sec/op where it has one); rates derived from it show its",
		"verdict, other units (in parentheses) are evidence, judged on p alone, as the counters are.")
}

// derivedText lists, for a Primary row, the changes of the rates derived
// from it: " (loops/s -89.65%)", or "".
func derivedText(r *AB, row *Row) string {
	var parts []string
	for _, d := range r.Rows {
		if d.Package == row.Package && d.Ident == row.Ident && d.Unit != row.Unit && d.Name == row.Name && d.Role == abstat.Derived {
			parts = append(parts, fmt.Sprintf("%s %s", d.Unit, pctChange(float64(d.Change))))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// writeSummary ends the text form: the rule, the counts,
// and the rows that are worse, underpowered or failed.
func writeSummary(b *strings.Builder, r *AB) {
	b.WriteString(strings.Join(ruleLines(r), "\n") + "\n")
	th, fam := 100*r.Threshold, r.Summary.Family
	level := fmt.Sprintf("p <= %g", r.Alpha)
	if fam >= 2 {
		level = fmt.Sprintf("q <= %g (p <= %.2g, %g over the %d rows, for a row changed alone)", r.Alpha, r.Alpha/float64(fam), r.Alpha, fam)
	}
	mde := fmt.Sprintf("mde: the change this test detects with %.0f%% power at %s, from the spread between boots "+
		"and n; need: boots a side to detect %g%%. A ~ row whose mde exceeds %g%% is underpowered: no evidence of no change.",
		100*abmath.TargetPower, level, th, th)
	switch {
	case !r.BootMode:
		mde = "No mde per sample: a boot's samples share its layout, so their spread does not say what change a test " +
			"could see; 3 boots a side give one (kbab -boots 3)."
	case r.opts.Design != nil:
		mde = fmt.Sprintf("A row its design planned is tested by the design's rule (its note names it), not Welch's: p from "+
			"the pilot's spread of boot medians alone, against t on the pilot's degrees of freedom; its mde is the change "+
			"its boots detect with %.0f%% power at the design's level, need the boots a side the rule asked. A ~ row whose "+
			"mde exceeds %g%% is underpowered; an undecided row got no verdict (too few boots for its test).",
			100*abmath.TargetPower, 100*r.opts.Target)
	}
	n := r.Summary
	fmt.Fprintf(b, "%s%s: %d worse, %d better, %d changed, %d ~, %d underpowered, %d old only, %d new only", para(mde, Width, "", ""),
		plural(n.Rows, "row", "rows"), n.Worse, n.Better, n.Changed, n.Same, n.Underpowered, n.OldOnly, n.NewOnly)
	if n.Undecided > 0 { // only where some row is: the reports of runs without one stay as they were
		fmt.Fprintf(b, ", %d undecided (too few boots for a verdict)", n.Undecided)
	}
	b.WriteString("\n")
	if fam >= 2 {
		b.WriteString(para(fmt.Sprintf("chance: %d of the %d rows compared have p <= %g, about %.1f would by chance alone (%d × %g); "+
			"q corrects for that.", n.Nominal, fam, r.Alpha, float64(fam)*r.Alpha, fam, r.Alpha), Width, "", ""))
	}
	if r.failures() > 0 {
		fmt.Fprintf(b, "%d failed, %d skipped on one side, %d other failures: nothing here is \"nothing worse\"\n", n.Failed, n.Skipped, len(r.Problems))
	}
	if k := len(slices.DeleteFunc(r.primaries(), func(row *Row) bool { return !row.undecidable })); k > 0 {
		fmt.Fprintf(b, "%s too few samples to call any change significant: use -count=10\n", plural(k, "row has", "rows have"))
	}
	line := func(s string) { b.WriteString(para(s, Width, "", "  ")) }
	for _, v := range []abstat.Verdict{abstat.Worse, abstat.Underpowered, abstat.Failed, abstat.Skipped} {
		for _, row := range r.primaries() {
			switch {
			case row.Verdict != v:
			case v == abstat.Worse:
				line(fmt.Sprintf("worse: %s %s %s %+.2f%%%s", row.Package, row.Name, row.Unit, 100*row.Change, derivedText(r, row)))
			case v == abstat.Underpowered:
				line(fmt.Sprintf("underpowered: %s %s %s could not have seen %g%%: mde %s, need %s boots",
					row.Package, row.Name, row.Unit, th, formatMDE(float64(row.MDE)), formatNeed(row.Need)))
			default:
				line(fmt.Sprintf("%s: %s %s %s: %s", strings.ToLower(string(row.Verdict)), row.Package, row.Name, row.Unit, row.Why))
			}
		}
	}
	for _, p := range r.Problems {
		line(fmt.Sprintf("failed: %s %s %s: %s", p.Side, p.Pkg, p.Name, p.What))
	}
	for _, s := range r.Skips {
		line(fmt.Sprintf("skipped, no results on either side: %s %s: %s", s.Pkg, s.Name, strings.Join(slices.DeleteFunc(slices.Clone(s.Why[:]), func(w string) bool { return w == "" }), "; ")))
	}
}

// bootsHeader says how many boots each side holds and what that means for
// the statistics, and warns about protect pulses earlier in a boot.
func bootsHeader(r *AB) []string {
	var lines []string
	n := func(side int) string { return plural([]int{r.Boots.Old, r.Boots.New}[side], "boot", "boots") }
	switch {
	case r.BootMode:
		lines = append(lines, fmt.Sprintf("boots: old %s, new %s. Boots are the samples: a row's center is the "+
			"geometric mean of its per-boot medians, p is Welch's t-test on their logs, and n counts boots, "+
			"so a layout shift between boots is part of the noise a change must stand out from.", n(0), n(1)))
	case r.Boots.Old == 1 || r.Boots.New == 1:
		lines = append(lines, fmt.Sprintf("boots: old %s, new %s. Boot-to-boot variation is unmeasured: "+
			"samples of one boot share its layout (KASLR, code and data placement), so a change below can be "+
			"layout, not the kernel. Boot each kernel %d times or more (docs/comparing.md).",
			n(0), n(1), abstat.MinBoots))
	default:
		lines = append(lines, fmt.Sprintf("boots: old %s, new %s: too few to use boots as samples (%d each); "+
			"the statistics below are per sample and a change can be layout, not the kernel.", n(0), n(1), abstat.MinBoots))
	}
	return append(lines, r.pulseWarnings(": later rows of that boot are contaminated (docs/pulses.md)")...)
}

// attrText formats the counters of a row for the text report: the own
// ones' cells (unit, old, new, change, p, n, up or down), the paced
// ones' notes and the unchanged units; nil where the row has none or
// they were listed already (done: a benchmark with several headline
// units lists them once, under its first table).
func attrText(done map[[3]string]bool, row *Row) string {
	key := [3]string{row.Package, row.Ident, row.Name}
	if len(row.Counters) == 0 || done[key] {
		return ""
	}
	done[key] = true
	var own [][]string
	var paced, same []string
	for _, c := range row.Counters {
		switch c.Group {
		case "own":
			cl := c.Cmp.cells(c.Unit, false)
			own = append(own, []string{c.Unit, cl.Old, cl.New, cl.Change, cl.P, cl.N, c.Verdict})
		case "paced":
			paced = append(paced, pacedNote(c))
		default:
			same = append(same, c.Unit)
		}
	}
	if len(own)+len(paced) == 0 {
		return fmt.Sprintf("    counters: none changed (%d compared)\n", len(same))
	}
	var b strings.Builder
	if len(own) > 0 {
		al, _ := align(own, 1)
		b.WriteString("    counters that changed per op (evidence, not verdicts):\n      " + strings.Join(al, "\n      ") + "\n")
	}
	if len(paced) > 0 {
		b.WriteString("    changed per op only as the op's time did (rate per second ~ or opposite):\n")
		b.WriteString(para(strings.Join(paced, ", "), Width-8, "      ", "        "))
	}
	if len(same) > 0 {
		b.WriteString(para("unchanged: "+strings.Join(same, " "), Width-8, "      ", "        "))
	}
	return b.String()
}
