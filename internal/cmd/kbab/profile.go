//go:build linux

package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/kbench/kbench/internal/abreport"
	"github.com/kbench/kbench/internal/abstat"
	"github.com/kbench/kbench/internal/profdelta"
)

// -profile: profile boots after the timed ones, and the report's
// perf-profile section from them (docs/profiles.md).

// profileMin is the fewest profile boots a side, for a spread.
const profileMin = 3

// profiledDesign runs an A/B design's boots, then 2 x -profile profile
// boots, ABBA, each the whole command with KBENCH_PROFILE; their
// outputs stay out of A.txt and B.txt.
type profiledDesign struct {
	design
	d *driver
	// timed is the number of timed boots once they are over, else -1.
	timed int
}

func (p *profiledDesign) next(i int) (nextBoot, bool, error) {
	d := p.d
	if p.timed < 0 {
		p.timed = slices.IndexFunc(d.st.Boots, func(r bootRecord) bool { return r.Profile > 0 })
	}
	if p.timed < 0 {
		if nb, ok, err := p.design.next(i); ok || err != nil {
			return nb, ok, err
		}
		p.timed = i
	}
	j := i - p.timed
	if j >= 2*d.st.Settings.Profile {
		return nextBoot{}, false, nil
	}
	count := 1
	if d.design != nil {
		count = d.design.Opts.Count
	}
	name := fmt.Sprintf("profile boot %d of %d", j+1, 2*d.st.Settings.Profile)
	return nextBoot{name: name, kernel: balancedOrder(j, 2), runs: d.wholeCommand(count), profile: j + 1}, true, nil
}

func (p *profiledDesign) progress() string {
	if p.timed < 0 {
		return p.design.progress()
	}
	return ""
}

// keepProfiles moves finished profile boot r's profiles to
// profiles/SIDE/pNN, replacing one there of no finished boot (a crash).
func (d *driver) keepProfiles(r bootRecord, dir string) error {
	dst := filepath.Join(d.cfg.out, "profiles", r.Kernel, fmt.Sprintf("p%02d", r.Profile))
	err := os.MkdirAll(filepath.Dir(dst), 0o777)
	if err == nil {
		err = os.RemoveAll(dst)
	}
	if err == nil {
		err = os.Rename(dir, dst)
	}
	return err
}

// profileSection is the report's perf-profile section (nil without
// -profile), its directories and error into n; profiles that cannot be
// read leave the verdicts standing, the section saying why.
func (d *driver) profileSection(rep *abstat.Report, n *abreport.RunNotes) []abreport.Profile {
	if d.st.Settings.Profile == 0 {
		return nil
	}
	o := d.cfg.out
	n.ProfileDirs = [2]string{filepath.Join(o, "profiles", "A"), filepath.Join(o, "profiles", "B")}
	n.Results = [2]string{d.result("A"), d.result("B")}
	profs, err := abreport.RowProfiles(rep, n.ProfileDirs[0], n.ProfileDirs[1], profdelta.DefaultOptions, [2]string{"profiles/A", "profiles/B"})
	if n.ProfileErr = err; err == nil && len(profs) == 0 {
		n.ProfileErr = errors.New("no row of the report has profiles on both sides")
	}
	if n.ProfileErr != nil {
		fmt.Fprintf(d.stderr, "kbab: perf-profile section: %v\n", n.ProfileErr)
	}
	return profs
}
