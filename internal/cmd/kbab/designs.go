//go:build linux

package main

import (
	"fmt"

	"github.com/kbench/kbench/internal/abplan"
)

// A design decides a run's boots and ends it with its report: the
// fixed A/B (-boots a side, ABBA), the planned A/B (-target: abplan),
// the series (-series: -boots a kernel, balanced rounds, change
// points) and the bisection (-bisect: a planned A/B of good against
// bad, then the search's images). The driver runs what next asks for,
// one boot at a time, and records it; a design keeps nothing of its own
// that the finished boots (kbab.json and the kernels' files) do not
// give again, so that a resumed run asks for the boots the first would
// have.
type design interface {
	// next is boot i's kernel and go test runs; ok is false where the
	// run has no boot left. An error stops the run with exit 2.
	next(i int) (nb nextBoot, ok bool, err error)
	// bootName names boot i for a message: "boot 3 of 6", "boot 7"
	// where the run's total is not known ahead.
	bootName(i int) string
	// progress is a progress line's tail: what is left, and how long.
	progress() string
}

// nextBoot is one boot a design asks for: the kernel (an index into
// the settings' kernels), its go test runs (the arguments after -exec),
// and the runs kbab.json records with the boot (a planned boot's).
type nextBoot struct {
	kernel int
	runs   [][]string
	record []pkgRun
	pair   *nextBoot // a duet's boot at once with this one (duet.go)
	// profile is a profile boot's number among them (1-based; profile.go).
	profile int
}

// newDesign is the settings' design (kbab.json's, checked by being the
// command line's), a duet's boots in pairs, profile boots after.
func (d *driver) newDesign() (design, error) {
	s := d.st.Settings
	if s.Target > 0 {
		var err error
		if d.design, err = abplan.New(d.designOptions()); err != nil {
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
// every kernel of the whole command, in the balanced order
// (balancedOrder: ABBA for two kernels), each at -count=1 unless the go
// test flags set it. The A/B ends with kbcompare's report of A against
// B, the series with its change points.
type roundsDesign struct{ d *driver }

func (r *roundsDesign) total() int { return len(r.d.st.Settings.Kernels) * r.d.st.Settings.Boots }

func (r *roundsDesign) next(i int) (nextBoot, bool, error) {
	if i >= r.total() {
		return nextBoot{}, false, nil
	}
	return nextBoot{kernel: balancedOrder(i, len(r.d.st.Settings.Kernels)), runs: r.d.wholeCommand(1)}, true, nil
}

func (r *roundsDesign) bootName(i int) string { return fmt.Sprintf("boot %d of %d", i+1, r.total()) }

func (r *roundsDesign) progress() string { return r.d.left(r.total() - len(r.d.st.Boots)) }
