//go:build linux

package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/kbench/kbench/internal/abfile"
	"github.com/kbench/kbench/internal/abplan"
	"github.com/kbench/kbench/internal/abreport"
	"github.com/kbench/kbench/internal/abstat"
)

// designOptions are the planned run's design: -target, -budget, the go
// test flags' -count (else abplan's), and abplan's pilot.
func (d *driver) designOptions() abplan.Options {
	o := abplan.DefaultOptions(d.st.Settings.Target)
	o.Count = plannedCount(d.st.Settings.GoTest, o.Count)
	o.Budget = d.cfg.budget.Seconds()
	return o
}

// runPlanned runs a planned comparison (-target), as the design
// (abplan.Design: Stein's two-stage test) says: the pilot's boots of
// the whole command, then pairs of boots of the rows the design leaves
// pending, until none is or the budget stops it; then the comparison,
// judged by the design.
//
// kbab decides nothing here: what runs next is the design's, from the
// pilot's spreads and A's costs alone, never from a boot after the
// pilot nor from the difference between A and B.
func (d *driver) runPlanned(stdout io.Writer, sig <-chan os.Signal) int {
	pilot := d.design.PilotBoots()
	for i := len(d.st.Done); ; i++ {
		if i >= pilot && i%2 == 0 {
			if err := d.replan(); err != nil {
				fmt.Fprintf(d.stderr, "kbab: planning: %v\n", err)
				return exitUsage
			}
			next, _ := d.design.Next(d.spent())
			if len(next) == 0 {
				if d.design.Cut {
					_, pending, _ := d.design.Progress()
					fmt.Fprintf(d.stderr, "kbab: -budget %s: the next pair would pass it after %s of boots (A's doubled); stopping with %d rows pending\n",
						d.cfg.budget, round(seconds(d.spent())), pending)
				}
				break
			}
			d.st.Round = nil
			for _, r := range next {
				d.st.Round = append(d.st.Round, pkgRun{Pkg: r.Pkg, Count: r.Count, Rows: r.Rows})
			}
			if err := d.st.write(d.statePath); err != nil {
				fmt.Fprintf(d.stderr, "kbab: %v\n", err)
				return exitUsage
			}
		}
		left := func() string {
			if len(d.st.Done) < pilot {
				return fmt.Sprintf(" (pilot: %d of %d boots at -count=%d)", len(d.st.Done), pilot, d.design.Opts.Count)
			}
			return d.progress()
		}
		if code, ok := d.runBoot(i, sig, left); !ok {
			return code
		}
	}
	if code, ok := d.runProfileBoots(sig); !ok {
		return code
	}
	return d.compare(stdout)
}

// replan brings the design up to the boots so far: the first time in a
// process it plans from the pilot (the first Pilot boots a side of A.txt
// and B.txt, and the costs of A's first boot) and writes the plan to
// plan.txt, the first plan of the run also to stderr; after that it
// records the boots each row holds. A resumed run plans as the first
// did: from the same pilot boots.
func (d *driver) replan() error {
	rep, err := abstat.Compare(d.result("A"), d.result("B"), abstat.DefaultOptions)
	if err != nil {
		return err
	}
	rows := abplan.RowsOf(rep, nil)
	if d.design.Planned {
		d.design.Update(rows)
		return d.writePlan(false)
	}
	costs, err := d.pilotCosts()
	if err != nil {
		return err
	}
	var spent float64
	for _, b := range d.st.Done[:d.design.PilotBoots()] {
		if b.Side == "A" {
			spent += 2 * b.Seconds
		}
	}
	d.design.Plan(rows, costs, spent)
	first := len(d.st.Done) == d.design.PilotBoots()
	return d.writePlan(first)
}

// pilotCosts are each package's boot cost from A's first boot: its go
// test time less its rows' timed work (iterations × sec/op), as
// abplan.PackageCost fits it from one boot. One boot of A: what B's
// speed cannot move, and what a resumed run reads again alike.
func (d *driver) pilotCosts() (map[string]float64, error) {
	files, _, err := abfile.Read(filepath.Join(d.cfg.out, "boots", "01-A.txt"))
	if err != nil {
		return nil, err
	}
	costs := map[string]float64{}
	for pkg, c := range abplan.PackageCost(files) {
		costs[pkg] = c.Boot
	}
	return costs, nil
}

// writePlan writes the design to plan.txt, and to stderr where first.
func (d *driver) writePlan(first bool) error {
	var b bytes.Buffer
	if err := abreport.WriteDesign(&b, d.design); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(d.cfg.out, "plan.txt"), b.Bytes(), 0o666); err != nil {
		return err
	}
	if first {
		fmt.Fprintf(d.stderr, "kbab: the plan from the pilot (%s):\n%s", filepath.Join(d.cfg.out, "plan.txt"), b.Bytes())
	}
	return nil
}

// progress is a progress line's tail: rows decided, pending and
// undecided, and the time the design has left by A's costs.
func (d *driver) progress() string {
	if !d.design.Planned {
		return ""
	}
	decided, pending, undecided := d.design.Progress()
	return fmt.Sprintf("; rows %d decided, %d pending, %d undecided; about %s left",
		decided, pending, undecided, round(seconds(max(d.design.Seconds-d.spent(), 0))))
}

// spent is what the finished boots count against the budget: A's boot
// times doubled, across resumes. B's own times never count, so when the
// budget stops a run cannot depend on B's speed.
func (d *driver) spent() float64 {
	var s float64
	for _, b := range d.st.Done {
		if b.Side == "A" {
			s += 2 * b.Seconds
		}
	}
	return s
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// compareOptions are the report's options under the design: its gate as
// the threshold, its test for the rows it planned.
func (d *driver) compareOptions() abstat.Options {
	o := abstat.DefaultOptions
	if d.design != nil && d.design.Planned {
		o.Threshold, o.Design, o.Target = d.design.Opts.Gate, d.design, d.design.Opts.Target
	}
	return o
}
