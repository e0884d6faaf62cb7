//go:build linux

package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/kbench/kbench/internal/abfile"
	"github.com/kbench/kbench/internal/abreport"
	"github.com/kbench/kbench/internal/abseries"
	"github.com/kbench/kbench/internal/abstat"
	"github.com/kbench/kbench/internal/kernelbuild"
)

// bisectDesign is a bisection over the list's kernels, good (first) to
// bad (last), on the -row: first the planned A/B of good against bad
// (plannedDesign, at -target and -budget) confirms that the row differs;
// then abseries.Search names each boot, the middle image in rounds with
// good and bad beside it, each a go test of the row's package at the
// design's -count and -bench of the row alone, until it names the first
// bad image, finds an image like neither good nor bad (not one step),
// or a step cannot tell within its looks (sized for -target). The
// search is rebuilt at every start from the finished boots (their
// medians fed in order), so a resumed run asks for the boots the first
// would have, and a kbab.json whose step boots are not the search's is
// refused.
type bisectDesign struct {
	d       *driver
	confirm plannedDesign
	// Once confirmed (st.Confirmed): the row, the good/bad comparison
	// and the search, fed the step boots up to fed.
	pkg, path, row string
	rep            *abstat.Report
	search         *abseries.Search
	fed            int
	skipped        map[int]string // image: why its commit does not build
	built          map[int]bool   // images made (cfg.image) by this process
}

func (b *bisectDesign) next(i int) (nextBoot, bool, error) {
	st := b.d.st
	if st.Confirmed == nil {
		nb, ok, err := b.confirm.next(i)
		if ok || err != nil {
			return nb, ok, err
		}
		if err := b.confirmed(); err != nil {
			return nextBoot{}, false, err
		}
	}
	if err := b.start(); err != nil {
		return nextBoot{}, false, err
	}
	if !moved(st.Confirmed.Verdict) {
		return nextBoot{}, false, nil
	}
	if err := b.feed(i); err != nil {
		return nextBoot{}, false, err
	}
	img, done, err := b.nextImage()
	if done || err != nil {
		return nextBoot{}, false, err
	}
	run := []pkgRun{{Pkg: b.path, Count: b.d.design.Opts.Count, Rows: []string{b.row}}}
	return nextBoot{kernel: img + 1, runs: b.d.pkgRuns(run), record: run}, true, nil
}

func moved(v string) bool { return abstat.Verdict(v).Moved() }

// confirmed ends the confirmation: good against bad, judged by the
// design, and the row's verdict recorded in kbab.json.
func (b *bisectDesign) confirmed() error {
	if err := b.compareEnds(); err != nil {
		return err
	}
	st := b.d.st
	row, _ := b.rowUnit()
	st.Confirmed = &confirmation{Boots: len(st.Boots), Verdict: string(row.Verdict)}
	fmt.Fprintf(b.d.stderr, "kbab: good %s against bad %s on %s %s after %d boots: %s\n",
		st.Settings.label(0), st.Settings.label(len(st.Settings.Kernels)-1), b.pkg, b.row, len(st.Boots), st.Confirmed.Verdict)
	return st.write(b.d.statePath)
}

// compareEnds compares good with bad under the design and finds the row.
func (b *bisectDesign) compareEnds() error {
	d := b.d
	s := d.st.Settings
	if d.design.Planned || len(d.st.Boots) >= d.design.PilotBoots() {
		if err := b.confirm.replan(); err != nil {
			return fmt.Errorf("planning: %v", err)
		}
	}
	var paths []string
	for _, k := range []int{0, len(s.Kernels) - 1} {
		p, err := b.confirmation(s.label(k))
		if err != nil {
			return err
		}
		paths = append(paths, p)
	}
	rep, err := abstat.Compare(paths[0], paths[1], d.compareOptions())
	if err != nil {
		return err
	}
	re := regexp.MustCompile(s.Row) // checked by parseFlags
	var names []string
	for t, row := range rep.Primaries() {
		if re.MatchString(row.Name) {
			b.pkg, b.path, b.row = t.Pkg, t.Path, row.Name
			names = append(names, t.Pkg+" "+row.Name)
		}
	}
	switch {
	case len(names) == 0:
		var all []string
		for t, row := range rep.Primaries() {
			all = append(all, t.Pkg+" "+row.Name)
		}
		return fmt.Errorf("-row %s matches none of the rows good and bad ran: %s", s.Row, strings.Join(all, ", "))
	case len(names) > 1:
		return fmt.Errorf("-row %s matches %d rows, want one: %s", s.Row, len(names), strings.Join(names, ", "))
	}
	b.rep = rep
	return nil
}

// confirmation is kernel label's file as the confirmation left it: the
// file itself until the confirmation ends, then a copy of its boots
// (DIR/confirmation/LABEL.txt), as the steps append good's and bad's
// boots beside each image.
func (b *bisectDesign) confirmation(label string) (string, error) {
	st := b.d.st
	if st.Confirmed == nil {
		return b.d.result(label), nil
	}
	data, err := outputs(b.d.cfg.out, label, st.Boots[:st.Confirmed.Boots])
	p := filepath.Join(b.d.cfg.out, "confirmation", label+".txt")
	if err == nil {
		err = os.MkdirAll(filepath.Dir(p), 0o777)
	}
	if err == nil {
		err = os.WriteFile(p, data, 0o666)
	}
	return p, err
}

// rowUnit is the row's judged primary and its unit (sec/op).
func (b *bisectDesign) rowUnit() (*abstat.Row, string) {
	for t, row := range b.rep.Primaries() {
		if t.Path == b.path && row.Name == b.row {
			return row, t.Unit
		}
	}
	return nil, ""
}

// start makes the search from the confirmation's boots, once a process.
func (b *bisectDesign) start() error {
	if b.rep == nil {
		if err := b.compareEnds(); err != nil {
			return err
		}
	}
	if b.search != nil || !moved(b.d.st.Confirmed.Verdict) {
		return nil
	}
	row, _ := b.rowUnit()
	if row.Samples[0] == nil || row.Samples[1] == nil {
		return fmt.Errorf("row %s %s: good or bad has no boots of it", b.pkg, b.row)
	}
	var err error
	b.search, err = abseries.NewSearch(row.Samples[0].Medians(), row.Samples[1].Medians(), len(b.d.st.Settings.Kernels)-2, b.options())
	if err != nil {
		return fmt.Errorf("bisecting %s %s: %v", b.pkg, b.row, err)
	}
	b.fed, b.skipped, b.built = b.d.st.Confirmed.Boots, map[int]string{}, map[int]bool{}
	return nil
}

// options are the search's: each step sized for -target, and each
// kernel's own offset allowed for where the list names more than one
// image (separate builds, each its own layout), at the series' floor.
func (b *bisectDesign) options() abseries.SearchOptions {
	o := abseries.DefaultSearchOptions
	o.Step = b.d.st.Settings.Target
	for _, k := range b.d.st.Settings.Kernels {
		if k.Image != b.d.st.Settings.Kernels[0].Image {
			o.Offset = abseries.DefaultOptions.Offset
		}
	}
	return o
}

// feed gives the search the row's median of every step boot before
// boot i that it has not seen, in order.
func (b *bisectDesign) feed(i int) error {
	d := b.d
	for ; b.fed < i; b.fed++ {
		r := d.st.Boots[b.fed]
		img, _, err := b.nextImage()
		if err != nil {
			return err
		}
		k := d.st.Settings.kernelIndex(r.Kernel)
		if k != img+1 {
			return fmt.Errorf("%s: boots[%d] (boot %d) is kernel %s, where the search asks for %s: it was not this bisection's; use a new -out",
				d.statePath, b.fed, r.Boot, r.Kernel, d.st.Settings.label(img+1))
		}
		med, err := b.median(r)
		if err != nil {
			return err
		}
		if err := b.search.Observe(img, med); err != nil {
			return fmt.Errorf("boot %d (%s): %v", r.Boot, r.Kernel, err)
		}
	}
	return nil
}

// nextImage is the search's next kernel (-1 good, an image, or images
// for bad), made first where it is an image not yet made (cfg.image: a
// commit built; good and bad were built before the first boot). An
// image whose commit does not build is skipped, as git bisect skip
// does, its failure kept for the report; a resumed run finds the same
// failures in the build cache at once.
func (b *bisectDesign) nextImage() (int, bool, error) {
	for {
		img, done := b.search.Next()
		if done || img < 0 || img >= len(b.d.st.Settings.Kernels)-2 || b.built[img] {
			return img, done, nil
		}
		err := b.d.cfg.image(img+1, b.d.stderr)
		var f *kernelbuild.Failed
		if !errors.As(err, &f) {
			b.built[img] = err == nil
			return img, false, err
		}
		fmt.Fprintf(b.d.stderr, "kbab: skipping %s: %v\n", b.label(img), err)
		b.skipped[img] = f.Why
		if err := b.search.Skip(img); err != nil {
			return 0, false, err
		}
	}
}

// median is the row's median in step boot r, from its output alone
// (bootFile: each boot read once), grouped as a comparison groups it
// (abstat.Grouped: the row in its primary unit).
func (b *bisectDesign) median(r bootRecord) (float64, error) {
	files, units, err := abfile.Read(bootFile(b.d.cfg.out, r))
	if err != nil {
		return 0, err
	}
	for t, row := range abstat.Grouped(files, units).Primaries() {
		if t.Path == b.path && row.Name == b.row && row.Samples[0] != nil {
			meds := row.Samples[0].Medians()
			return meds[len(meds)-1], nil
		}
	}
	return 0, fmt.Errorf("boot %d (%s): %s has no result of %s %s", r.Boot, r.Kernel, bootFile(b.d.cfg.out, r), b.pkg, b.row)
}

func (b *bisectDesign) bootName(i int) string {
	if b.d.st.Confirmed == nil {
		return fmt.Sprintf("boot %d (confirming)", i+1)
	}
	if b.search != nil {
		return fmt.Sprintf("boot %d (step %d)", i+1, len(b.search.Result().Steps)+1)
	}
	return fmt.Sprintf("boot %d", i+1)
}

func (b *bisectDesign) progress() string {
	if b.d.st.Confirmed == nil {
		return b.confirm.progress()
	}
	if b.search == nil {
		return ""
	}
	r := b.search.Result()
	looks, _ := b.search.Looks()
	return fmt.Sprintf("; first bad between %s and %s, %d step boots, at most %d steps of %d rounds", b.label(r.Lo), b.label(r.Hi), r.Boots, abseries.Steps(len(b.d.st.Settings.Kernels)-2), looks[len(looks)-1])
}

// label is image img's kernel label (-1 the good kernel, images the bad).
func (b *bisectDesign) label(img int) string { return b.d.st.Settings.label(img + 1) }

// report is the confirmation's A/B report, then the bisection: each
// step's image, boots and decision, and the first bad image, or why it
// cannot tell; the exit status is abreport's rule (BisectRun.Exit).
func (b *bisectDesign) report() ([]byte, int, error) {
	d := b.d
	s := d.st.Settings
	var confirm bytes.Buffer
	// The confirmation's report, with its planned run's tail.
	if err := abreport.WriteText(&confirm, abreport.New(b.rep, nil, &abreport.RunNotes{Design: d.design, Budget: d.cfg.budget, PlanFile: filepath.Join(d.cfg.out, "plan.txt")})); err != nil {
		return nil, 0, err
	}
	row, unit := b.rowUnit()
	run := abreport.BisectRun{List: s.List, Row: s.Row, Pkg: b.pkg, RowName: b.row, Target: s.Target,
		ConfirmBoots: d.st.Confirmed.Boots, Verdict: abstat.Verdict(d.st.Confirmed.Verdict), Change: row.Change, Unit: unit,
		Opts: b.options(), BootsInAll: len(d.st.Boots), ConfirmReport: confirm.Bytes()}
	for _, k := range s.Kernels {
		run.Kernels = append(run.Kernels, abreport.Kernel{Label: k.Label, Boots: describe(k)})
	}
	if moved(d.st.Confirmed.Verdict) {
		run.Search, run.Skipped = b.search.Result(), b.skipped
		var levels []float64
		run.Looks, levels = b.search.Looks()
		run.Level = levels[len(levels)-1]
	}
	var out bytes.Buffer
	err := abreport.WriteBisect(&out, run)
	return out.Bytes(), run.Exit(), err
}
