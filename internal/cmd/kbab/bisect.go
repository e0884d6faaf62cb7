//go:build linux

package main

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/kbench/kbench/internal/abfile"
	"github.com/kbench/kbench/internal/abreport"
	"github.com/kbench/kbench/internal/abseries"
	"github.com/kbench/kbench/internal/abstat"
	"github.com/kbench/kbench/internal/kernelbuild"
)

// bisectDesign is a bisection over the list's kernels on the -row: a
// planned A/B of good against bad confirms that the row differs, then
// abseries.Search names each boot, a go test of the row alone. The
// search is rebuilt at every start from the finished boots' medians,
// so a resume asks for the boots the first would have.
type bisectDesign struct {
	d       *driver
	confirm plannedDesign
	// Once confirmed: the row, good against bad, and the search, fed
	// the step boots up to fed.
	pkg, path, row, unit string
	rep                  *abstat.Report
	judged               *abstat.Row // the row in rep
	search               *abseries.Search
	fed                  int
	skipped              map[int]string // image: why its commit does not build
	built                map[int]bool   // images made (cfg.image) by this process
}

func (b *bisectDesign) next(i int) (nextBoot, bool, error) {
	if b.d.st.Confirmed == nil {
		nb, ok, err := b.confirm.next(i)
		if ok || err != nil {
			nb.name += " (confirming)"
			return nb, ok, err
		}
	}
	if err := b.start(); err != nil || !moved(b.d.st.Confirmed.Verdict) {
		return nextBoot{}, false, err
	}
	if err := b.feed(i); err != nil {
		return nextBoot{}, false, err
	}
	img, done, err := b.nextImage()
	if done || err != nil {
		return nextBoot{}, false, err
	}
	run := []pkgRun{{Pkg: b.path, Count: b.d.design.Opts.Count, Rows: []string{b.row}}}
	name := fmt.Sprintf("boot %d (step %d)", i+1, len(b.search.Result().Steps)+1)
	return nextBoot{name: name, kernel: img + 1, runs: b.d.pkgRuns(run), record: run}, true, nil
}

func moved(v string) bool { return abstat.Verdict(v).Moved() }

// compareEnds compares good with bad under the design and finds the row.
func (b *bisectDesign) compareEnds() error {
	d := b.d
	s := d.st.Settings
	if d.design.Planned || len(d.st.Boots) >= d.design.PilotBoots() {
		if err := b.confirm.replan(); err != nil {
			return fmt.Errorf("planning: %v", err)
		}
	}
	// Good's and bad's files hold the confirmation's boots (state.inFile).
	rep, err := abstat.Compare(d.result(s.label(0)), d.result(s.label(len(s.Kernels)-1)), d.compareOptions())
	if err != nil {
		return err
	}
	re := regexp.MustCompile(s.Row) // checked by parseFlags
	var names, all []string
	for t, row := range rep.Primaries() {
		all = append(all, t.Pkg+" "+row.Name)
		if re.MatchString(row.Name) {
			b.pkg, b.path, b.row, b.judged, b.unit = t.Pkg, t.Path, row.Name, row, t.Unit
			names = append(names, t.Pkg+" "+row.Name)
		}
	}
	switch {
	case len(names) == 0:
		return fmt.Errorf("-row %s matches none of the rows good and bad ran: %s", s.Row, strings.Join(all, ", "))
	case len(names) > 1:
		return fmt.Errorf("-row %s matches %d rows, want one: %s", s.Row, len(names), strings.Join(names, ", "))
	}
	b.rep = rep
	return nil
}

// start compares good with bad once a process, ending the confirmation
// (the row's verdict in kbab.json) where it has not ended, and makes
// the search from the confirmation's boots where the row moved.
func (b *bisectDesign) start() error {
	if b.rep != nil {
		return nil
	}
	if err := b.compareEnds(); err != nil {
		return err
	}
	st := b.d.st
	if st.Confirmed == nil {
		st.Confirmed = &confirmation{Boots: len(st.Boots), Verdict: string(b.judged.Verdict)}
		fmt.Fprintf(b.d.stderr, "kbab: good %s against bad %s on %s %s after %d boots: %s\n",
			st.Settings.label(0), st.Settings.label(len(st.Settings.Kernels)-1), b.pkg, b.row, len(st.Boots), st.Confirmed.Verdict)
		if err := st.write(b.d.statePath); err != nil {
			return err
		}
	}
	if !moved(st.Confirmed.Verdict) {
		return nil
	}
	row := b.judged
	if row.Samples[0] == nil || row.Samples[1] == nil {
		return fmt.Errorf("row %s %s: good or bad has no boots of it", b.pkg, b.row)
	}
	var err error
	b.search, err = abseries.NewSearch(row.Samples[0].Medians(), row.Samples[1].Medians(), len(st.Settings.Kernels)-2, b.options())
	if err != nil {
		return fmt.Errorf("bisecting %s %s: %v", b.pkg, b.row, err)
	}
	b.fed, b.skipped, b.built = st.Confirmed.Boots, map[int]string{}, map[int]bool{}
	return nil
}

// options are the search's: steps sized for -target, and kernels' own
// offsets allowed for where the list names more than one image.
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

// feed gives the search the row's median of each unseen step boot before i.
func (b *bisectDesign) feed(i int) error {
	d := b.d
	for ; b.fed < i; b.fed++ {
		r := d.st.Boots[b.fed]
		img, _, err := b.nextImage()
		if err != nil {
			return err
		}
		if r.Kernel != d.st.Settings.label(img+1) {
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

// nextImage is the search's next kernel (-1 good, images bad), built
// first where it is a commit; one that does not build is skipped, as
// git bisect skip does, its failure kept for the report.
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

// median is the row's median in step boot r, from its output alone,
// grouped as a comparison groups it.
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

// report is the confirmation's A/B report, then the bisection's.
func (b *bisectDesign) report() ([]byte, int, error) {
	d := b.d
	s := d.st.Settings
	var confirm bytes.Buffer
	if err := abreport.WriteText(&confirm, abreport.New(b.rep, nil, &abreport.RunNotes{Design: d.design, PlanFile: filepath.Join(d.cfg.out, "plan.txt")})); err != nil {
		return nil, 0, err
	}
	run := abreport.BisectRun{List: s.List, Row: s.Row, Pkg: b.pkg, RowName: b.row, Target: s.Target,
		ConfirmBoots: d.st.Confirmed.Boots, Verdict: abstat.Verdict(d.st.Confirmed.Verdict), Change: b.judged.Change, Unit: b.unit,
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
