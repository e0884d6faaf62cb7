//go:build linux

package abreport

import (
	"cmp"
	"fmt"
	"path"

	"github.com/kbench/kbench/internal/abfile"
	"github.com/kbench/kbench/internal/abstat"
)

// shortBoot abbreviates a boot id for a header.
func shortBoot(b string) string { return cmp.Or(b[:min(8, len(b))], "(no boot id)") }

// direction describes a row's unit for a header.
func direction(row *Row) string {
	if row.better != 0 {
		return dirWord(row.better) + " is better"
	}
	return fmt.Sprintf("direction unknown: no `Unit %s better=...` line", row.Unit)
}

// dirWord words a unit's direction (+1 higher is better, -1 lower).
func dirWord(better int) string {
	return cmp.Or(map[int]string{1: "higher", -1: "lower"}[better], "unknown")
}

// pulseWarnings warn of the protect pulses that ran before the results
// in a boot of either side, each line ending in tail.
func (a *AB) pulseWarnings(tail string) []string {
	var out []string
	for side, ps := range a.pulses {
		for _, p := range ps {
			note := "this run began with a KBENCH_PULSE=protect sweep"
			if p.Earlier != "" {
				note = "protect pulses ran earlier in this boot: " + p.Earlier
			}
			out = append(out, fmt.Sprintf("warning: %s, boot %s: %s%s", sideNames[side], shortBoot(p.Boot), note, tail))
		}
	}
	return out
}

// counterDirection words a counter's change: counters have no better side.
func counterDirection(change float64) string {
	switch {
	case change > 0:
		return "up"
	case change < 0:
		return "down"
	}
	return "~"
}

// pacedNote says how an event counter changed per op and per second.
func pacedNote(c Counter) string {
	s := fmt.Sprintf("%s %+.0f%%", c.Unit, 100*c.Change)
	if c.RateVerdict.Moved() {
		s += fmt.Sprintf(" (%+.0f%%/s)", 100*c.RateChange)
	} else if c.RateVerdict != "" {
		s += " (~/s)"
	}
	return s
}

// sideNames are the sides' names, by abstat's side index.
var sideNames = [2]string{"old", "new"}

// Why words what failed or skipped a row on a side (abstat.Outcome):
// what go test printed, on which side, at which file and line; "" for
// nil.
func Why(o *abstat.Outcome) string {
	if o == nil {
		return ""
	}
	side := sideNames[o.Side]
	switch o.Kind {
	case abfile.Failed:
		return fmt.Sprintf("--- FAIL in %s (%s:%d)", side, o.File, o.Line)
	case abfile.BinaryFailed:
		return fmt.Sprintf("missing from %s, whose test binary failed (%s:%d)", side, o.File, o.Line)
	}
	why := fmt.Sprintf("skipped in %s (%s:%d)", side, o.File, o.Line)
	if o.Reason != "" {
		why += ": " + o.Reason
	}
	return why
}

// problem words a failure no row shows.
func problem(p abstat.Outcome) Problem {
	what, name := fmt.Sprintf("the test binary failed (%s:%d)", p.File, p.Line), p.Pkg
	if p.Kind == abfile.Failed {
		what, name = fmt.Sprintf("--- FAIL, no results (%s:%d)", p.File, p.Line), p.Name
	}
	return Problem{sideNames[p.Side], path.Base(p.Pkg), name, what}
}

// noteText words one note.
func noteText(n abstat.Note) string {
	switch n.Kind {
	case abstat.Library:
		return n.Err.Error()
	case abstat.TooFewBoots:
		return fmt.Sprintf("too few boots: only %d+%d boots hold this row (need %d each): no verdict, since a per-sample test would take a boot's layout for a change",
			n.Boots[0], n.Boots[1], abstat.MinBoots)
	case abstat.FlatSamples:
		return fmt.Sprintf("no spread: every sample of both sides is %.4g", n.Values[0])
	case abstat.FlatBootsEqual:
		return fmt.Sprintf("no spread: every boot of both sides has the median %.4g, so p is 1, not a test", n.Values[0])
	case abstat.FlatBoots:
		return fmt.Sprintf("no spread: each side's boots share one median (%.4g, %.4g), so p is 0, not a test", n.Values[0], n.Values[1])
	case abstat.FlatBootsOld:
		return "no spread between old's boots: Welch's test rests on new's spread alone"
	case abstat.FlatBootsNew:
		return "no spread between new's boots: Welch's test rests on old's spread alone"
	case abstat.DesignBoots:
		return fmt.Sprintf("%s: %d boots a side planned, %d held", n.Rule, n.Boots[0], n.Boots[1])
	case abstat.DesignUndecided:
		return "undecided: " + n.Why
	}
	return fmt.Sprintf("note %d", n.Kind)
}
