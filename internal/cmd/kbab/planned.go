//go:build linux

package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kbench/kbench/internal/abreport"
	"github.com/kbench/kbench/internal/abstat"
)

// runPlanned runs a planned comparison (-target): the pilot, then boot
// pairs of the rows the plan leaves pending, replanning before each
// pair from the spreads of the boots so far, until no row is pending
// or the next pair would pass the budget; then the comparison.
//
// What to run next depends on the plan alone, and the plan on each
// side's spreads around its own center alone (abstat.NewPlan): never on
// the difference between A and B, so that the final test keeps its
// false-alarm rate (abstat's TestPlannedRun draws it).
func (d *driver) runPlanned(stdout io.Writer, sig <-chan os.Signal) int {
	pilot := 2 * abstat.PilotBoots
	for i := len(d.st.Done); ; i++ {
		if i >= pilot && i%2 == 0 {
			if err := d.replan(); err != nil {
				fmt.Fprintf(d.stderr, "kbab: planning: %v\n", err)
				return exitUsage
			}
			next := d.plan.Next()
			if len(next) == 0 {
				break
			}
			if b := d.cfg.budget; b > 0 && d.spent()+2*pairSeconds(next) > b.Seconds() {
				d.cut = true
				_, pending, _, _ := d.plan.Progress()
				fmt.Fprintf(d.stderr, "kbab: -budget %s: the next pair (about %s) would pass it after %s of boots; stopping with %d rows pending\n",
					b, round(seconds(2*pairSeconds(next))), round(seconds(d.spent())), pending)
				break
			}
			d.st.Round = nil
			for _, run := range next {
				r := pkgRun{Pkg: run.Pkg.Pkg, Count: run.Pkg.Count}
				for _, rp := range run.Rows {
					r.Rows = append(r.Rows, rp.Name)
				}
				d.st.Round = append(d.st.Round, r)
			}
			if err := d.st.write(d.statePath); err != nil {
				fmt.Fprintf(d.stderr, "kbab: %v\n", err)
				return exitUsage
			}
		}
		left := func() string {
			if len(d.st.Done) < pilot {
				return fmt.Sprintf(" (pilot: %d of %d boots)", len(d.st.Done), pilot)
			}
			return d.progress()
		}
		if code, ok := d.runBoot(i, sig, left); !ok {
			return code
		}
	}
	return d.compare(stdout)
}

// replan plans from the boots so far, with the counts of the first
// plan, and writes it to plan.txt; the first plan also goes to stderr
// and fixes the counts.
func (d *driver) replan() error {
	opts := abstat.DefaultPlanOptions
	opts.Target = d.st.Settings.Target
	opts.Counts = d.st.Counts
	p, err := abstat.PlanFiles(opts, d.result("A"), d.result("B"))
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if err := abreport.WritePlan(&b, p); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(d.cfg.out, "plan.txt"), b.Bytes(), 0o666); err != nil {
		return err
	}
	if d.st.Counts == nil {
		fmt.Fprintf(d.stderr, "kbab: the plan from the pilot (%s):\n%s", filepath.Join(d.cfg.out, "plan.txt"), b.Bytes())
		d.st.Counts = p.Counts()
		if err := d.st.write(d.statePath); err != nil {
			return err
		}
	}
	d.plan = p
	return nil
}

// progress is a progress line's tail: rows decided and pending, boots
// done and planned, and the time the plan has left.
func (d *driver) progress() string {
	if d.plan == nil {
		return ""
	}
	decided, pending, done, planned := d.plan.Progress()
	return fmt.Sprintf("; rows %d decided, %d pending; boots %d of %d a side (all packages); about %s left",
		decided, pending, done, planned, round(seconds(planLeft(d.plan))))
}

// spent is the seconds the finished boots took, across resumes.
func (d *driver) spent() float64 {
	var s float64
	for _, b := range d.st.Done {
		s += b.Seconds
	}
	return s
}

// pairSeconds is what one boot of these runs costs.
func pairSeconds(runs []abstat.Run) float64 {
	var s float64
	for _, r := range runs {
		s += r.Pkg.BootCost
		for _, rp := range r.Rows {
			s += float64(r.Pkg.Count) * rp.Sample
		}
	}
	return s
}

// planLeft is the seconds, both sides, of the boots the plan still asks.
func planLeft(p *abstat.Plan) float64 {
	var s float64
	for _, pp := range p.Pkgs {
		most := 0
		for _, rp := range pp.Rows {
			if n := rp.Boots - rp.Done; n > 0 {
				most = max(most, n)
				s += 2 * float64(n*pp.Count) * rp.Sample
			}
		}
		s += 2 * float64(most) * pp.BootCost
	}
	return s
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// plannedTail closes a planned run's report: how many rows hold their
// planned boots, and each row the budget cut short with the mde its
// boots reached.
func (d *driver) plannedTail(rep *abstat.Report) string {
	if d.plan == nil {
		return ""
	}
	var b strings.Builder
	decided, pending, _, _ := d.plan.Progress()
	fmt.Fprintf(&b, "\nkbab -target %s: %d of %d rows hold their planned boots (the plan: %s)\n",
		abreport.FormatMDE(d.st.Settings.Target), decided, decided+pending, filepath.Join(d.cfg.out, "plan.txt"))
	if pending == 0 {
		return b.String()
	}
	why := "pending"
	if d.cut {
		why = fmt.Sprintf("cut short by -budget %s", d.cfg.budget)
	}
	fmt.Fprintf(&b, "%d rows %s, with the mde their boots reached:\n", pending, why)
	for t, row := range rep.Primaries() {
		rp := d.plan.Find(t.Path, row.Name)
		if rp == nil || !rp.Pending() {
			continue
		}
		mde := "?"
		if row.Power != nil {
			mde = abreport.FormatMDE(row.Power.MDE)
		}
		fmt.Fprintf(&b, "  %s %s: mde %s at %d of %d boots a side\n", t.Pkg, row.Name, mde, rp.Done, rp.Boots)
	}
	return b.String()
}
