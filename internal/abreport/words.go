//go:build linux

package abreport

import (
	"fmt"
	"path"
	"strings"

	"github.com/kbench/kbench/internal/abfile"
	"github.com/kbench/kbench/internal/abstat"
)

// shortBoot abbreviates a boot id for a header.
func shortBoot(b string) string {
	if b == "" {
		return "(no boot id)"
	}
	if len(b) > 8 {
		return b[:8]
	}
	return b
}

// direction describes a table's unit for a header.
func direction(t *abstat.Table) string {
	if t.Better != 0 {
		return dirWord(t.Better) + " is better"
	}
	return fmt.Sprintf("direction unknown: no `Unit %s better=...` line", t.Unit)
}

// pulseNote says in which boot protect pulses ran before the results.
func pulseNote(p abfile.Pulse) string {
	note := "this run began with a KBENCH_PULSE=protect sweep"
	if p.Earlier != "" {
		note = "protect pulses ran earlier in this boot: " + p.Earlier
	}
	return fmt.Sprintf("boot %s: %s", shortBoot(p.Boot), note)
}

// counterDirection words a counter's change: counters have no better side.
func counterDirection(row *abstat.Row) string {
	switch {
	case row.Change > 0:
		return "up"
	case row.Change < 0:
		return "down"
	}
	return "~"
}

// pacedNotes say how each event counter changed per op and per second.
func pacedNotes(ls []abstat.AttrLine) []string {
	var notes []string
	for _, l := range ls {
		s := fmt.Sprintf("%s %+.0f%%", l.Unit, 100*l.Row.Change)
		if l.Rate != nil && l.Rate.Old != nil && l.Rate.New != nil {
			if l.Rate.Verdict.Moved() {
				s += fmt.Sprintf(" (%+.0f%%/s)", 100*l.Rate.Change)
			} else {
				s += " (~/s)"
			}
		}
		notes = append(notes, s)
	}
	return notes
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

// jsonProblem is a failure no row shows (Report.Problems), worded.
type jsonProblem struct {
	Side string `json:"side"`
	Pkg  string `json:"package"`
	Name string `json:"name"`
	What string `json:"what"`
}

// problem words a failure no row shows.
func problem(p abstat.Outcome) jsonProblem {
	what, name := fmt.Sprintf("the test binary failed (%s:%d)", p.File, p.Line), p.Pkg
	if p.Kind == abfile.Failed {
		what, name = fmt.Sprintf("--- FAIL, no results (%s:%d)", p.File, p.Line), p.Name
	}
	return jsonProblem{sideNames[p.Side], path.Base(p.Pkg), name, what}
}

// skipWhys words a skip's sides, old then new; "" where a side did not
// skip it.
func skipWhys(s *abstat.Skip) [2]string {
	return [2]string{Why(s.Sides[0]), Why(s.Sides[1])}
}

// skipWhy is a skip's sides worded, joined by "; ".
func skipWhy(s *abstat.Skip) string {
	var why []string
	for _, w := range skipWhys(s) {
		if w != "" {
			why = append(why, w)
		}
	}
	return strings.Join(why, "; ")
}

// warnings words a row's notes (abstat.Note), in their order.
func warnings(row *abstat.Row) []string {
	var out []string
	for _, n := range row.Notes {
		out = append(out, noteText(n))
	}
	return out
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
