//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/kbench/kbench/internal/abfile"
	"github.com/kbench/kbench/internal/abplan"
	"github.com/kbench/kbench/internal/abreport"
	"github.com/kbench/kbench/internal/abstat"
)

// plannedDesign is a planned comparison (-target) of kernels a and b,
// as abplan's design says: the pilot's boots of the whole command, then
// pairs of boots of the rows it leaves pending, until none is or the
// budget stops it. What runs next never depends on B against A.
type plannedDesign struct {
	d    *driver
	a, b int // the kernels compared
	// held counts, per row (import path, name), the boots of each side
	// that hold it, over the first read finished boots (each read once).
	read int
	held map[[2]string][2]int
	// pair is the go test runs of the boot pair under way.
	pair []abplan.Run
}

func (p *plannedDesign) next(i int) (nextBoot, bool, error) {
	d := p.d
	nb := nextBoot{name: fmt.Sprintf("boot %d", i+1), kernel: []int{p.a, p.b}[balancedOrder(i, 2)]}
	if i < d.design.PilotBoots() {
		nb.runs = d.wholeCommand()
		return nb, true, nil
	}
	if i%2 == 0 {
		if err := p.replan(); err != nil {
			return nextBoot{}, false, fmt.Errorf("planning: %v", err)
		}
		if p.pair, _ = d.design.Next(p.spent(d.st.Boots)); len(p.pair) == 0 {
			if d.design.Cut {
				_, pending, _ := d.design.Progress()
				fmt.Fprintf(d.stderr, "kbab: -budget %s: the next pair would pass it after %s of boots (%s's doubled); stopping with %d rows pending\n",
					d.cfg.budget, round(seconds(p.spent(d.st.Boots))), d.st.Settings.label(p.a), pending)
			}
			return nextBoot{}, false, nil
		}
	} else if i-1 < len(d.st.Boots) {
		// The pair's second boot runs the first's (a resume reads them).
		p.pair = d.st.Boots[i-1].Runs
	}
	nb.runs, nb.record = d.pkgRuns(p.pair), p.pair
	return nb, true, nil
}

func (p *plannedDesign) progress() string {
	d := p.d
	if n := len(d.st.Boots); n < d.design.PilotBoots() {
		return fmt.Sprintf(" (pilot: %d of %d boots at -count=%d)", n, d.design.PilotBoots(), d.design.Opts.Count)
	}
	if !d.design.Planned {
		return ""
	}
	decided, pending, undecided := d.design.Progress()
	return fmt.Sprintf("; rows %d decided, %d pending, %d undecided; about %s left",
		decided, pending, undecided, round(seconds(max(d.design.Seconds-p.spent(d.st.Boots), 0))))
}

// replan brings the design up to the boots so far: the first time in a
// process it plans from the pilot; then it reads the boots finished
// since, each once, and writes plan.txt (the run's first plan also to
// stderr).
func (p *plannedDesign) replan() error {
	d := p.d
	first := false
	if !d.design.Planned {
		if err := p.plan(); err != nil {
			return err
		}
		first = len(d.st.Boots) == d.design.PilotBoots()
	}
	for ; p.read < len(d.st.Boots); p.read++ {
		b := d.st.Boots[p.read]
		side := slices.Index([]string{d.st.Settings.label(p.a), d.st.Settings.label(p.b)}, b.Kernel)
		if side < 0 {
			continue
		}
		f, _, err := abfile.Read(bootFile(d.cfg.out, b))
		if err != nil {
			return err
		}
		seen := map[[2]string]bool{}
		for _, r := range f[0].Results {
			if k := [2]string{r.Config["pkg"], r.Name}; !seen[k] {
				h := p.held[k]
				h[side]++
				p.held[k], seen[k] = h, true
			}
		}
	}
	d.design.Update(func(pkg, name string) int {
		h := p.held[[2]string{pkg, name}]
		return min(h[0], h[1])
	})
	var b bytes.Buffer
	if err := abreport.WriteDesign(&b, d.design); err != nil {
		return err
	}
	plan := filepath.Join(d.cfg.out, "plan.txt")
	if first {
		fmt.Fprintf(d.stderr, "kbab: the plan from the pilot (%s):\n%s", plan, b.Bytes())
	}
	return os.WriteFile(plan, b.Bytes(), 0o666)
}

// plan plans the design from the pilot alone, each package's boot cost
// from a's first boot (abplan.BootCosts), so a resume plans the same.
func (p *plannedDesign) plan() error {
	d := p.d
	pilot := d.st.Boots[:d.design.PilotBoots()]
	names, data := make([]string, 2), make([][]byte, 2)
	for i, k := range []int{p.a, p.b} {
		var err error
		names[i] = d.result(d.st.Settings.label(k))
		if data[i], err = d.st.outputs(d.cfg.out, d.st.Settings.label(k), pilot); err != nil {
			return err
		}
	}
	files, units, err := abfile.ReadData(names, data)
	if err != nil {
		return err
	}
	first, _, err := abfile.Read(bootFile(d.cfg.out, pilot[0]))
	if err != nil {
		return err
	}
	d.design.Plan(abplan.RowsOf(abstat.Grouped(files, units)), abplan.BootCosts(first), p.spent(pilot))
	return nil
}

// spent is what boots count against the budget: a's boot times doubled
// (b's speed never decides when the budget stops a run).
func (p *plannedDesign) spent(boots []bootRecord) float64 {
	var s float64
	for _, b := range boots {
		if b.Kernel == p.d.st.Settings.label(p.a) {
			s += 2 * b.Seconds
		}
	}
	return s
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// compareOptions are the report's options under the design.
func (d *driver) compareOptions() abstat.Options {
	o := abstat.DefaultOptions
	if d.design != nil && d.design.Planned {
		o.Threshold, o.Design, o.Target = d.design.Opts.Threshold, d.design.TestRow, d.design.Opts.Target
	} else if d.st.Settings.Duet {
		o.Design, o.Target = abplan.Paired(o.Alpha), o.Threshold
	}
	return o
}
