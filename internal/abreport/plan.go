//go:build linux

package abreport

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/kbench/kbench/internal/abmath"
	"github.com/kbench/kbench/internal/abplan"
	"github.com/kbench/kbench/internal/abstat"
)

// WritePlan writes a plan (abplan.Plan): per package its boot cost, the
// -count and boots a side it needs and the minutes they take; per row
// its spreads within and between boots, its sample's cost, its own
// Kalibera-Jones count, the boots it needs at its package's count and
// the mde they give; then the suite's total against the fixed design.
func WritePlan(w io.Writer, p *abplan.Plan) error {
	var b strings.Builder
	o := p.Opts
	level := fmt.Sprintf("alpha %g over %d rows: %.2g a row, where the q of a row changed alone reaches alpha", o.Alpha, p.Rows, p.RowAlpha)
	if o.PerRow {
		level = fmt.Sprintf("alpha %g a row", o.Alpha)
	}
	fmt.Fprintf(&b, "plan: mde <= %s at %.0f%% power, %s (Welch's t-test of boot medians), -count %d-%d, at most %d boots a side\n",
		FormatMDE(o.Target), 100*abmath.TargetPower, level, o.MinCount, o.MaxCount, o.MaxBoots)
	var unreached []string
	for _, pp := range p.Pkgs {
		fmt.Fprintf(&b, "\n%s: -count %d, %d boots a side, boot %s, %s in all\n",
			pp.Name, pp.Count, pp.Boots, seconds(pp.BootCost), minutes(pp.Seconds))
		fmt.Fprintf(&b, "  %5s %6s %6s %7s %7s %6s %4s  %s\n", "boots", "mde", "within", "between", "sample", "own-n", "done", "row")
		for _, r := range pp.Rows {
			between := spread(rel(r.Scale, r.Comp.Between))
			if r.Comp.NoBetween {
				between = "?"
			}
			boots := fmt.Sprint(r.Boots)
			if !r.Reach {
				boots = "-"
				unreached = append(unreached, fmt.Sprintf("  %s %s: mde %s at %d boots a side", pp.Name, r.Name, FormatMDE(r.MDE), r.Boots))
			}
			fmt.Fprintf(&b, "  %5s %6s %6s %7s %7s %6d %4d  %s\n", boots, FormatMDE(r.MDE),
				spread(rel(r.Scale, r.Comp.Within)), between, seconds(r.Sample), r.OwnCount, r.Done, r.Name)
		}
	}
	fmt.Fprintf(&b, "\nplanned: %s, %d of %d rows reach mde <= %s\n", minutes(p.Seconds), p.Reached, p.Rows, FormatMDE(o.Target))
	fmt.Fprintf(&b, "fixed %d+%d boots at -count=%d: %s, %d of %d rows reach it\n",
		abplan.FixedBoots, abplan.FixedBoots, abplan.FixedCount, minutes(p.FixedSeconds), p.FixedReached, p.Rows)
	if len(unreached) > 0 {
		fmt.Fprintf(&b, "out of reach within %d boots a side at their package's -count (planned at %d):\n", o.MaxBoots, abstat.MinBoots)
		for _, u := range unreached {
			b.WriteString(u + "\n")
		}
	}
	if noBetween(p) {
		b.WriteString("note: no side holds two boots, so the boot effect is unknown and taken as 0: the plan is a lower bound\n")
	}
	b.WriteString("costs: a sample is its iterations × sec/op, times the package's overhead per timed second;\n" +
		"a boot is the rest of go test's time for the package (VM boot, TestMain), both from its ok lines\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func noBetween(p *abplan.Plan) bool {
	for _, pp := range p.Pkgs {
		for _, r := range pp.Rows {
			if r.Comp.NoBetween {
				return true
			}
		}
	}
	return false
}

// rel is a variance on a row's scale as a relative standard deviation.
func rel(sc abmath.Scale, v float64) float64 {
	if math.IsNaN(v) {
		return v
	}
	return sc.Change(math.Sqrt(v), 1)
}

// seconds formats a cost in seconds, to 3 digits.
func seconds(s float64) string {
	d := time.Duration(s * float64(time.Second))
	switch {
	case d >= 100*time.Second:
		return d.Round(time.Second).String()
	case d >= time.Second:
		return fmt.Sprintf("%.1fs", s)
	case d >= time.Millisecond:
		return fmt.Sprintf("%.0fms", s*1e3)
	}
	return fmt.Sprintf("%.0fµs", s*1e6)
}

// minutes formats a cost in minutes.
func minutes(s float64) string { return fmt.Sprintf("%.1f min", s/60) }

// WriteDesign writes a planned run's design (abplan.Design): the rule
// and its level, then per package its boot cost and per row the pilot's
// spread of boot medians, the boots the rule asks, what the row runs to
// and the power the rule predicts at the target for that spread; then
// the planned seconds.
func WriteDesign(w io.Writer, d *abplan.Design) error {
	var b strings.Builder
	o := d.Opts
	level := fmt.Sprintf("p <= %.2g a row (alpha %g over %d rows: where the q of a row changed alone reaches alpha)", d.Level, o.Alpha, rowsOf(d))
	switch {
	case o.PerRow:
		level = fmt.Sprintf("p <= %g a row", o.Alpha)
	case !d.Planned: // the rows and their level are the pilot's
		level = fmt.Sprintf("alpha %g over the rows the pilot finds", o.Alpha)
	}
	fmt.Fprintf(&b, "design: %s (Stein 1945) for a change of %s at %.0f%% power, %s, gate %s;\n",
		abplan.RuleName, FormatMDE(o.Target), 100*o.Power, level, FormatMDE(o.Gate))
	fmt.Fprintf(&b, "pilot %d boots a side, every boot at -count=%d; at most %d boots a side", o.Pilot, o.Count, o.MaxBoots)
	if o.Budget > 0 {
		fmt.Fprintf(&b, "; budget %s (A's costs doubled)", seconds(o.Budget))
	}
	b.WriteString("\n")
	if !d.Planned {
		b.WriteString("the pilot is under way: no row is planned yet\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	for _, pp := range d.Pkgs {
		fmt.Fprintf(&b, "\n%s: boot %s\n", pp.Pkg[strings.LastIndex(pp.Pkg, "/")+1:], seconds(pp.BootCost))
		fmt.Fprintf(&b, "  %5s %5s %4s %6s %6s %7s  %-12s %s\n", "need", "boots", "done", "s0", "power", "sample", "status", "row")
		for _, r := range pp.Rows {
			s0, power := "-", "-"
			if r.Status != abplan.NoPilot {
				s0 = spread(r.Scale.Change(math.Sqrt(r.S0sq), 1))
				power = fmt.Sprintf("%.0f%%", 100*r.PredictedPower())
			}
			fmt.Fprintf(&b, "  %5d %5d %4d %6s %6s %7s  %-12s %s\n", r.Need, r.Boots, r.Done, s0, power, seconds(r.Sample), r.Status, r.Name)
		}
	}
	decided, pending, undecided := d.Progress()
	fmt.Fprintf(&b, "\nplanned: %s (A's costs doubled); rows %d decided, %d pending, %d without a verdict (out of reach, over budget, no pilot)\n",
		minutes(d.Seconds), decided, pending, undecided)
	b.WriteString("need: the boots a side the rule asks, from the pilot's pooled variance s0² of boot medians alone;\n" +
		"power: the rule's chance of calling a change of the target worse if the boot medians spread as s0 says\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func rowsOf(d *abplan.Design) int {
	n := 0
	for _, pp := range d.Pkgs {
		n += len(pp.Rows)
	}
	return n
}
