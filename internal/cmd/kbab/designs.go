//go:build linux

package main

import (
	"cmp"
	"fmt"

	"github.com/kbench/kbench/internal/abplan"
	"golang.org/x/sys/unix"
)

// A design decides a run's boots: fixed, planned, series or bisect. It
// keeps nothing the finished boots do not give again, so that a resumed
// run asks for the boots the first would have.
type design interface {
	// next is boot i; ok is false where none is left.
	next(i int) (nb nextBoot, ok bool, err error)
	// progress is a progress line's tail: what is left, and how long.
	progress() string
}

// nextBoot is one boot a design asks for: the kernel's index, its go
// test runs (after -exec), and what kbab.json records (a planned boot's).
type nextBoot struct {
	name    string // for messages: "boot 3 of 6", "boot 7"
	kernel  int
	runs    [][]string
	record  []pkgRun
	pair    *nextBoot   // a duet's boot at once with this one (duet.go)
	cpus    unix.CPUSet // a duet's boot's CPUs (none: kbab's)
	profile int         // a profile boot's number (1-based; profile.go)
}

// newDesign is the settings' design, a duet's boots in pairs, profile
// boots after.
func (d *driver) newDesign() (design, error) {
	s := d.st.Settings
	if s.Target > 0 {
		// The planned run's options: -target, -budget, the go test
		// flags' -count (else abplan's).
		o := abplan.DefaultOptions(s.Target)
		_, count, _ := splitGoTest(s.GoTest) // checked by parseFlags
		o.Count, o.Budget, o.Paired = cmp.Or(count, o.Count), d.cfg.budget.Seconds(), s.Duet
		var err error
		if d.design, err = abplan.New(o); err != nil {
			return nil, err
		}
	}
	var des design
	d.report = d.compare
	switch s.Design {
	case "fixed":
		des = &roundsDesign{d: d}
	case "series":
		des, d.report = &roundsDesign{d: d}, d.seriesReport
	case "planned":
		des = &plannedDesign{d: d, a: 0, b: 1}
	default:
		b := &bisectDesign{d: d, confirm: plannedDesign{d: d, a: 0, b: len(s.Kernels) - 1}}
		des, d.report = b, b.report
	}
	if s.Duet {
		des = &duetDesign{design: des, d: d}
	}
	if s.Profile > 0 {
		des = &profiledDesign{design: des, d: d, timed: -1}
	}
	return des, nil
}

// roundsDesign is the fixed A/B's and the series': -boots boots of
// every kernel of the whole command, in the balanced order.
type roundsDesign struct{ d *driver }

func (r *roundsDesign) total() int { return len(r.d.st.Settings.Kernels) * r.d.st.Settings.Boots }

func (r *roundsDesign) next(i int) (nextBoot, bool, error) {
	if i >= r.total() {
		return nextBoot{}, false, nil
	}
	return nextBoot{name: fmt.Sprintf("boot %d of %d", i+1, r.total()), kernel: balancedOrder(i, len(r.d.st.Settings.Kernels)), runs: r.d.wholeCommand(1)}, true, nil
}

func (r *roundsDesign) progress() string { return r.d.left(r.total() - len(r.d.st.Boots)) }
