//go:build linux

package abreport

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/kbench/kbench/internal/abfile"
	"github.com/kbench/kbench/internal/abstat"
)

// briefWidth is the most columns the brief form uses: a terminal's, and
// what a review thread quotes without rewrapping.
const briefWidth = 80

// The brief form lists this many setup lines, changed rows (up to 5
// lines each) and failures without a row in full and counts the rest, so
// that it stays within 40 lines whatever changed.
const (
	briefSetup    = 5
	briefRows     = 4
	briefProblems = 2
)

// WriteBrief writes the brief form, for a reviewer to paste: the setup
// lines that differ, the rows whose verdict moved (or that failed) with
// their change, interval, q and the counters that moved under them, one
// line for the underpowered rows and the summary; every line fits
// briefWidth. The full form (WriteText) has every row.
func WriteBrief(w io.Writer, r *AB) error {
	var lines []string
	add := func(s string) { lines = append(lines, fit(s, briefWidth)) }
	// upTo adds each of n items up to most, then a line counting the rest.
	upTo := func(n, most int, each func(i int), rest func(int) string) {
		for i := range min(n, most) {
			each(i)
		}
		if n > most {
			add("  ... " + rest(n-most) + " (-format text lists them)")
		}
	}
	add("kbcompare old " + fitMiddle(r.Old, briefWidth-14))
	add("          new " + fitMiddle(r.New, briefWidth-14))
	if r.BootMode {
		add(fmt.Sprintf("boots: %d+%d, boots are the samples (Welch's t-test on boot medians)", r.Boots.Old, r.Boots.New))
	} else {
		add(fmt.Sprintf("boots: %d+%d: variation between boots unmeasured, a change can be layout", r.Boots.Old, r.Boots.New))
	}
	for _, l := range r.pulseWarnings("") {
		add(l)
	}

	// Boot ids differ by nature, one per boot.
	setup := slices.DeleteFunc(slices.Clone(r.Setup), func(d abstat.SetupDiff) bool { return d.Key == abfile.BootIDKey })
	add(fmt.Sprintf("setup: %s, %d equal (boot ids aside)", plural(len(setup), "line differs", "lines differ"), r.SetupEqual))
	upTo(len(setup), briefSetup, func(i int) { add("  " + setupChange(setup[i], briefWidth-2)) }, func(n int) string { return fmt.Sprintf("%d more", n) })

	n := r.Summary
	var listed []*Row
	for _, row := range r.primaries() {
		if row.Verdict.Moved() || row.Verdict == abstat.Failed || row.Verdict == abstat.Skipped {
			listed = append(listed, row)
		}
	}
	add(fmt.Sprintf("changed: %d of %d rows (q <= %g, change at least %g%%)", n.Worse+n.Better+n.Changed, n.Rows, r.Alpha, 100*r.Threshold))
	upTo(len(listed), briefRows, func(i int) { lines = append(lines, briefRow(r, listed[i])...) },
		func(n int) string { return plural(n, "more row", "more rows") })
	upTo(len(r.Problems), briefProblems, func(i int) {
		p := r.Problems[i]
		add(fmt.Sprintf("  failed  %s %s %s: %s", p.Side, p.Pkg, p.Name, p.What))
	}, func(n int) string { return plural(n, "more failure", "more failures") })

	if n.Underpowered > 0 {
		lo, hi := math.Inf(1), 0.0
		for _, row := range r.primaries() {
			if row.Verdict == abstat.Underpowered {
				lo, hi = min(lo, float64(row.MDE)), max(hi, float64(row.MDE))
			}
		}
		add(fmt.Sprintf("underpowered: %s could not have seen %g%% (mde %s to %s)", plural(n.Underpowered, "row", "rows"),
			100*r.Threshold, formatMDE(lo), formatMDE(hi)))
	}
	var counts []string
	for _, v := range []abstat.Verdict{abstat.Worse, abstat.Better, abstat.Changed, abstat.Same, abstat.Underpowered,
		abstat.Undecided, abstat.OldOnly, abstat.NewOnly, abstat.Failed, abstat.Skipped} {
		if k := *n.counts()[v]; k > 0 {
			counts = append(counts, fmt.Sprintf("%d %s", k, strings.ToLower(string(v))))
		}
	}
	add(fmt.Sprintf("%s: %s", plural(n.Rows, "row", "rows"), strings.Join(counts, ", ")))
	if n.Family > 1 {
		add(fmt.Sprintf("chance: %d of %d rows have p <= %g, %.1f would by chance alone", n.Nominal, n.Family, r.Alpha, float64(n.Family)*r.Alpha))
	}
	if r.failures() > 0 {
		add(fmt.Sprintf("%d failed, %d skipped on one side, %d other failures: not \"nothing worse\"", n.Failed, n.Skipped, len(r.Problems)))
	}
	if len(r.Profiles) > 0 {
		profileBrief(add, r.Profiles)
	}
	_, err := io.WriteString(w, printable(strings.Join(lines, "\n")+"\n"))
	return err
}

// briefRow is a changed or failed row: its verdict and name (the name
// on a line of its own where both do not fit), then its change with
// interval, p and q, the rates derived from it, and the counters that
// moved under it.
func briefRow(r *AB, row *Row) []string {
	const indent = "          "
	lines := []string{fmt.Sprintf("  %-7s %s %s", row.Verdict, row.Package, row.Name)}
	if runes(lines[0]) > briefWidth {
		lines = []string{fmt.Sprintf("  %-7s %s", row.Verdict, row.Package), indent + fitMiddle(row.Name, briefWidth-len(indent))}
	}
	add := func(s string) { lines = append(lines, fit(indent+s, briefWidth)) }
	if row.Verdict == abstat.Failed || row.Verdict == abstat.Skipped {
		add(row.Why)
		return lines
	}
	add(fmt.Sprintf("%s %s [%s, %s] p=%.3f q=%.3f", row.Unit, pctChange(float64(row.Change)), pct(float64(row.ChangeLo)), pct(float64(row.ChangeHi)), row.P, row.Q))
	if d := derivedText(r, row); d != "" {
		add("rates: " + strings.Trim(d, " ()"))
	}
	var moved, paced []string
	for _, c := range row.Counters {
		switch c.Group {
		case "own":
			moved = append(moved, fmt.Sprintf("%s %+.0f%%", c.Unit, 100*c.Change))
		case "paced":
			paced = append(paced, pacedNote(c))
		}
	}
	s := strings.Join(moved, ", ")
	if len(paced) > 0 {
		if s != "" {
			s += "; "
		}
		s += "paced by its time: " + strings.Join(paced, ", ")
	}
	if s != "" {
		add("counters: " + s)
	}
	return lines
}

// setupChange says how a setup line differs, in at most w columns: both
// values where they fit, else the words one value has and the other
// lacks (a cmdline's "+nosmt -quiet").
func setupChange(d abstat.SetupDiff, w int) string {
	s := fmt.Sprintf("%s: %s -> %s", d.Key, absent(d.Old), absent(d.New))
	ow, nw := strings.Fields(d.Old), strings.Fields(d.New)
	if runes(s) <= w || len(ow) < 2 && len(nw) < 2 {
		return fit(s, w)
	}
	var diff []string
	for _, x := range ow {
		if !slices.Contains(nw, x) {
			diff = append(diff, "-"+x)
		}
	}
	for _, x := range nw {
		if !slices.Contains(ow, x) {
			diff = append(diff, "+"+x)
		}
	}
	if len(diff) == 0 {
		diff = []string{"(the same words, reordered)"}
	}
	return fit(d.Key+": "+strings.Join(diff, " "), w)
}

// fitMiddle cuts s to w runes by its middle, keeping both ends (a
// path's file name, a row's last parameters).
func fitMiddle(s string, w int) string {
	r := []rune(s)
	if len(r) <= w {
		return s
	}
	head := (w - 1) / 2
	return string(r[:head]) + "…" + string(r[len(r)-(w-1-head):])
}

// fit cuts s to w runes, ending in "…" where it was cut.
func fit(s string, w int) string {
	if runes(s) <= w {
		return s
	}
	return string([]rune(s)[:w-1]) + "…"
}
