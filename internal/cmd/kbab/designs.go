//go:build linux

package main

import (
	"fmt"
	"io"

	"github.com/kbench/kbench/internal/abplan"
)

// designNames are kbab's designs, as kbab.json names them.
var designNames = []string{"fixed", "planned", "series", "bisect"}

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
	// report writes the run's report to report.txt and stdout, and
	// returns kbab's exit status.
	report(stdout io.Writer) int
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

// newDesign is the settings' design.
func (d *driver) newDesign() (design, error) {
	s := d.st.Settings
	if s.Target > 0 {
		var err error
		if d.design, err = abplan.New(d.designOptions()); err != nil {
			return nil, err
		}
	}
	des, err := d.designOf(s.Design)
	if err == nil && s.Duet {
		des = &duetDesign{design: des, d: d}
	}
	if err == nil && s.Profile > 0 {
		des = &profiledDesign{design: des, d: d, timed: -1}
	}
	return des, err
}

// designOf is the design named, a duet's boots one by one.
func (d *driver) designOf(name string) (design, error) {
	s := d.st.Settings
	switch name {
	case "fixed":
		return &roundsDesign{d: d, finish: d.compare}, nil
	case "series":
		return &roundsDesign{d: d, finish: d.seriesReport}, nil
	case "planned":
		return &plannedDesign{d: d, a: 0, b: 1}, nil
	case "bisect":
		return &bisectDesign{d: d, confirm: plannedDesign{d: d, a: 0, b: len(s.Kernels) - 1}}, nil
	}
	return nil, fmt.Errorf("design %q: want one of %v", s.Design, designNames)
}

// roundsDesign is the fixed A/B's and the series': -boots boots of
// every kernel of the whole command, in the balanced order
// (balancedOrder: ABBA for two kernels), each at -count=1 unless the go
// test flags set it. The A/B ends with kbcompare's report of A against
// B, the series with its change points.
type roundsDesign struct {
	d      *driver
	finish func(stdout io.Writer) int
}

func (r *roundsDesign) report(stdout io.Writer) int { return r.finish(stdout) }

func (r *roundsDesign) total() int { return len(r.d.st.Settings.Kernels) * r.d.st.Settings.Boots }

func (r *roundsDesign) next(i int) (nextBoot, bool, error) {
	if i >= r.total() {
		return nextBoot{}, false, nil
	}
	return nextBoot{kernel: balancedOrder(i, len(r.d.st.Settings.Kernels)), runs: r.d.wholeCommand(1)}, true, nil
}

func (r *roundsDesign) bootName(i int) string { return fmt.Sprintf("boot %d of %d", i+1, r.total()) }

func (r *roundsDesign) progress() string { return r.d.left(r.total() - len(r.d.st.Boots)) }
