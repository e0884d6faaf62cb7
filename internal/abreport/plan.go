//go:build linux

package abreport

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/kbench/kbench/internal/abplan"
)

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

// WriteDesign writes a planned run's design (abplan.Design): the rule
// and its level, then per package its boot cost and per row the pilot's
// spread of boot medians, the boots the rule asks, what the row runs to
// and the power the rule predicts at the target for that spread; then
// the planned seconds.
func WriteDesign(w io.Writer, d *abplan.Design) error {
	var b strings.Builder
	o := d.Opts
	decided, pending, undecided := d.Progress()
	level := fmt.Sprintf("p <= %.2g a row (alpha %g over %d rows: where the q of a row changed alone reaches alpha)", d.Level, o.Alpha, decided+pending+undecided)
	if !d.Planned { // the rows and their level are the pilot's
		level = fmt.Sprintf("alpha %g over the rows the pilot finds", o.Alpha)
	}
	fmt.Fprintf(&b, "design: %s (Stein 1945) for a change of %s at %.0f%% power, %s, gate %s;\n",
		abplan.RuleName, formatMDE(o.Target), 100*o.Power, level, formatMDE(o.Threshold))
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
	fmt.Fprintf(&b, "\nplanned: %s (A's costs doubled); rows %d decided, %d pending, %d without a verdict (out of reach, over budget, no pilot)\n",
		fmt.Sprintf("%.1f min", d.Seconds/60), decided, pending, undecided)
	b.WriteString("need: the boots a side the rule asks, from the pilot's pooled variance s0² of boot medians alone;\n" +
		"power: the rule's chance of calling a change of the target worse if the boot medians spread as s0 says\n")
	_, err := io.WriteString(w, b.String())
	return err
}
