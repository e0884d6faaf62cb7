//go:build linux

package abreport

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/kbench/kbench/internal/abplan"
	"github.com/kbench/kbench/internal/abstat"
)

// RunNotes are what a kbab run adds to the text report of its boots.
type RunNotes struct {
	// Design is the planned run's design (-target); nil, or not yet
	// planned, for a fixed run.
	Design *abplan.Design
	// Budget is the run's -budget, PlanFile where it wrote its plan.
	Budget   time.Duration
	PlanFile string
	// Profile is the perf-profile section of a run with -profile; nil
	// for none.
	Profile *RunProfile
	// Retries says, per boot that was retried, why.
	Retries []string
}

// RunProfile is a kbab run's perf-profile section: its rows' deltas,
// or why there are none; and the run's profile directories and result
// files (A, B), for the kbcompare command that gives the other forms.
type RunProfile struct {
	Rows          []RowProfile
	Err           error
	Dirs, Results [2]string
}

// writeRunProfile writes the section, or why it is missing.
func writeRunProfile(w io.Writer, p *RunProfile) error {
	if p.Err != nil {
		_, err := fmt.Fprintf(w, "\nperf-profile: none: %v\n", p.Err)
		return err
	}
	if err := WriteProfileText(w, p.Rows); err != nil {
		return err
	}
	// The "-format json" that the section's "... more" lines name is
	// kbcompare's: say how to get it, and the pictures, from this run.
	_, err := fmt.Fprintf(w, "\nevery function, other forms, flame graphs: kbcompare -profiles-old %s -profiles-new %s [-format json] [-plot DIR] %s %s\n",
		p.Dirs[0], p.Dirs[1], p.Results[0], p.Results[1])
	return err
}

// WriteRun writes kbab's report: the text report, a planned run's tail
// (plannedTail), the perf-profile section and a line per retried boot.
func WriteRun(w io.Writer, rep *abstat.Report, n RunNotes) error {
	var b strings.Builder
	if err := WriteText(&b, rep); err != nil {
		return err
	}
	b.WriteString(plannedTail(rep, n))
	if n.Profile != nil {
		if err := writeRunProfile(&b, n.Profile); err != nil {
			return err
		}
	}
	for _, r := range n.Retries {
		fmt.Fprintf(&b, "retried: %s\n", r)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// plannedTail closes a planned run's report: the rule, how many rows it
// decided, and each row without a verdict with its boots and the mde
// they reached.
func plannedTail(rep *abstat.Report, n RunNotes) string {
	d := n.Design
	if d == nil || !d.Planned {
		return ""
	}
	var b strings.Builder
	o := d.Opts
	decided, pending, undecided := d.Progress()
	fmt.Fprintf(&b, "\nkbab -target %s: %s, pilot %d+%d boots, every boot at -count=%d, each row at p <= %.2g (%g over %d rows), gate %s; %d of %d rows decided (the plan: %s)\n",
		FormatMDE(o.Target), abplan.RuleName, o.Pilot, o.Pilot, o.Count, d.Level, o.Alpha, decided+pending+undecided,
		FormatMDE(o.Gate), decided, decided+pending+undecided, n.PlanFile)
	var lines []string
	for t, row := range rep.Primaries() {
		if row.Verdict != abstat.Undecided {
			continue
		}
		rp := d.Find(t.Path, row.Name)
		why := "too few boots"
		if rp != nil {
			why = string(rp.Status)
			if rp.Status == abplan.Running {
				why = "cut short"
			}
			if rp.Status == abplan.OverBudget || (d.Cut && rp.Status == abplan.Running) {
				why += fmt.Sprintf(" by -budget %s", n.Budget)
			}
		}
		mde := "?"
		if row.Power != nil {
			mde = FormatMDE(row.Power.MDE)
		}
		n := 0
		if row.Samples[0] != nil && row.Samples[1] != nil {
			n = min(row.Samples[0].Boots(), row.Samples[1].Boots())
		}
		need := ""
		if rp != nil {
			need = fmt.Sprintf(", the rule asks %d", rp.Need)
		}
		lines = append(lines, fmt.Sprintf("  %s %s: undecided: %d+%d boots, mde %s (%s%s)", t.Pkg, row.Name, n, n, mde, why, need))
	}
	if len(lines) > 0 {
		rows := "rows"
		if len(lines) == 1 {
			rows = "row"
		}
		fmt.Fprintf(&b, "%d %s undecided, outside the verdicts and the exit status:\n%s\n", len(lines), rows, strings.Join(lines, "\n"))
	}
	return b.String()
}
