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
	// ProfileDirs are a -profile run's profile directories and Results
	// its result files (A, B), for the kbcompare command that gives the
	// section's other forms; "": no -profile. ProfileErr says why the
	// run has no section.
	ProfileDirs, Results [2]string
	ProfileErr           error
}

// writeRun ends kbab's report, b (the text report): a planned run's tail
// (plannedTail), the perf-profile section or why there is none, and a
// (kbab's own lines, the retried boots, follow).
func writeRun(w io.Writer, b *strings.Builder, a *AB) error {
	n := a.Run
	b.WriteString(plannedTail(a.Report, *n))
	if n.ProfileDirs[0] != "" {
		if n.ProfileErr != nil {
			fmt.Fprintf(b, "\nperf-profile: none: %v\n", n.ProfileErr)
		} else {
			if err := writeProfileText(b, a.Profiles); err != nil {
				return err
			}
			// The "-format json" that the section's "... more" lines name is
			// kbcompare's: say how to get it, and the pictures, from this run.
			fmt.Fprintf(b, "\nevery function, other forms, flame graphs: kbcompare -profiles-old %s -profiles-new %s [-format json] [-plot DIR] %s %s\n",
				n.ProfileDirs[0], n.ProfileDirs[1], n.Results[0], n.Results[1])
		}
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
