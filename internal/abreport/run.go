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
	// Retries says, per boot that was retried, why.
	Retries []string
}

// WriteRun writes kbab's report: the text report, a planned run's tail
// (plannedTail) and a line per retried boot.
func WriteRun(w io.Writer, rep *abstat.Report, n RunNotes) error {
	var b strings.Builder
	if err := WriteText(&b, rep); err != nil {
		return err
	}
	b.WriteString(plannedTail(rep, n))
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
