//go:build linux

package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/kbench/kbench/internal/abreport"
	"github.com/kbench/kbench/internal/abseries"
	"github.com/kbench/kbench/internal/abstat"
	"github.com/kbench/kbench/internal/kernelbuild"
)

// bisectDesign is a bisection over the list's kernels, good (first) to
// bad (last), on the -row: first the planned A/B of good against bad
// (plannedDesign, at -target and -budget) confirms that the row differs;
// then abseries.Search picks the middle image to boot, one boot at a
// time, each a go test of the row's package at the design's -count and
// -bench of the row alone, until it names the first bad image, or a
// step cannot tell within its boots. The search is rebuilt at every
// start from the finished boots (their medians fed in order), so a
// resumed run asks for the boots the first would have, and a kbab.json
// whose step boots are not the search's is refused.
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
	st.Confirmed = &confirmation{Boots: len(st.Boots), Verdict: string(b.rowOf().Verdict)}
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
	rep, err := abstat.Compare(d.result(s.label(0)), d.result(s.label(len(s.Kernels)-1)), d.compareOptions())
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

// rowOf is the bisected row in the good/bad comparison.
func (b *bisectDesign) rowOf() *abstat.Row {
	for t, row := range b.rep.Primaries() {
		if t.Path == b.path && row.Name == b.row {
			return row
		}
	}
	return nil
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
	row := b.rowOf()
	if row.Samples[0] == nil || row.Samples[1] == nil {
		return fmt.Errorf("row %s %s: good or bad has no boots of it", b.pkg, b.row)
	}
	var err error
	b.search, err = abseries.NewSearch(row.Samples[0].Medians(), row.Samples[1].Medians(), len(b.d.st.Settings.Kernels)-2, abseries.DefaultSearchOptions)
	if err != nil {
		return fmt.Errorf("bisecting %s %s: %v", b.pkg, b.row, err)
	}
	b.fed = b.d.st.Confirmed.Boots
	return nil
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
		meds, err := b.medians(r.Kernel)
		if err != nil {
			return err
		}
		nth := 0
		for _, e := range d.st.Boots[d.st.Confirmed.Boots:b.fed] {
			if e.Kernel == r.Kernel {
				nth++
			}
		}
		if nth >= len(meds) {
			return fmt.Errorf("boot %d (%s): %s.txt has %d boots of %s %s, want %d", r.Boot, r.Kernel, r.Kernel, len(meds), b.pkg, b.row, nth+1)
		}
		if err := b.search.Observe(img, meds[nth]); err != nil {
			return fmt.Errorf("boot %d (%s): %v", r.Boot, r.Kernel, err)
		}
	}
	return nil
}

// nextImage is the search's next image that has an image: the image
// for this point is made (cfg.image: a commit built), and one whose
// commit does not build is skipped, as git bisect skip does, its
// failure kept for the report. A resumed run finds the same failures
// in the build cache at once.
func (b *bisectDesign) nextImage() (int, bool, error) {
	for {
		img, done := b.search.Next()
		if done {
			return img, true, nil
		}
		err := b.d.cfg.image(img+1, b.d.stderr)
		var f *kernelbuild.Failed
		if !errors.As(err, &f) {
			return img, false, err
		}
		fmt.Fprintf(b.d.stderr, "kbab: skipping %s: %v\n", b.label(img), err)
		if b.skipped == nil {
			b.skipped = map[int]string{}
		}
		b.skipped[img] = f.Why
		if err := b.search.Skip(img); err != nil {
			return 0, false, err
		}
	}
}

// medians are the row's boot medians in kernel label's file, in order.
func (b *bisectDesign) medians(label string) ([]float64, error) {
	s := b.d.st.Settings
	rep, err := abstat.Compare(b.d.result(s.label(0)), b.d.result(label), abstat.DefaultOptions)
	if err != nil {
		return nil, err
	}
	for t, row := range rep.Primaries() {
		if t.Path == b.path && row.Name == b.row && row.Samples[1] != nil {
			return row.Samples[1].Medians(), nil
		}
	}
	return nil, nil
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
	return fmt.Sprintf("; first bad between %s and %s, %d step boots, at most %d steps", b.label(r.Lo), b.label(r.Hi), r.Boots, abseries.Steps(len(b.d.st.Settings.Kernels)-2))
}

// label is image img's kernel label (-1 the good kernel, images the bad).
func (b *bisectDesign) label(img int) string { return b.d.st.Settings.label(img + 1) }

// report is the confirmation's A/B report, then the bisection: each
// step's image, boots and decision, and the first bad image, or why it
// cannot tell. Exit 0 where it names the first bad image, 1 where it
// cannot tell (good and bad do not differ on the row, or a step stayed
// undecided).
func (b *bisectDesign) report(stdout io.Writer) int {
	d := b.d
	s := d.st.Settings
	var confirm bytes.Buffer
	// The confirmation's report, with its planned run's tail.
	if err := abreport.WriteRun(&confirm, b.rep, abreport.RunNotes{Design: d.design, Budget: d.cfg.budget, PlanFile: filepath.Join(d.cfg.out, "plan.txt")}); err != nil {
		fmt.Fprintf(d.stderr, "kbab: %v\n", err)
		return exitUsage
	}
	run := abreport.BisectRun{List: s.List, Row: s.Row, Pkg: b.pkg, RowName: b.row, Target: s.Target,
		ConfirmBoots: d.st.Confirmed.Boots, Verdict: abstat.Verdict(d.st.Confirmed.Verdict), Change: b.rowOf().Change,
		Opts: abseries.DefaultSearchOptions, BootsInAll: len(d.st.Boots), ConfirmReport: confirm.Bytes()}
	for _, k := range s.Kernels {
		run.Kernels = append(run.Kernels, abreport.Kernel{Label: k.Label, Boots: describe(k)})
	}
	if moved(d.st.Confirmed.Verdict) {
		run.Search, run.Skipped = b.search.Result(), b.skipped
		run.Bounds[0], run.Bounds[1] = b.search.Bounds()
	}
	var out bytes.Buffer
	if err := abreport.WriteBisect(&out, run); err != nil {
		fmt.Fprintf(d.stderr, "kbab: %v\n", err)
		return exitUsage
	}
	return b.write(stdout, out.Bytes(), run.Exit())
}

func (b *bisectDesign) write(stdout io.Writer, rep []byte, code int) int {
	if err := b.d.writeReport(stdout, rep); err != nil {
		fmt.Fprintf(b.d.stderr, "kbab: %v\n", err)
		return exitUsage
	}
	return code
}
