//go:build linux

package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/kbench/kbench/internal/abreport"
	"github.com/kbench/kbench/internal/abstat"
	"github.com/kbench/kbench/internal/profdelta"
)

// -profile: profile boots after the timed ones, in boots of their own
// (sampling slows the rows), and the report's perf-profile section from
// their profiles; docs/profiles.md says what runs, where the profiles
// land (profiles/A/pNN, profiles/cut/ for a try cut short) and why.

// profileMin is the fewest profile boots a side: the spread of the
// per-boot costs per op (and shares) needs boots.
const profileMin = 3

// profileFlag registers -profile.
func profileFlag(fs *flag.FlagSet, c *config) {
	fs.IntVar(&c.profile, "profile", 0, "after the timed boots, this `number` of profile boots a side (3 or more; 0: none), each the same go test with KBENCH_PROFILE, for the report's perf-profile section")
}

// checkProfile names what is wrong with -profile.
func (c *config) checkProfile() error {
	switch {
	case c.profile == 0:
		return nil
	case c.profile < profileMin:
		return fmt.Errorf("-profile %d: want 0 (no profile boots) or %d or more profile boots a side: the boots are the samples of the section's spread", c.profile, profileMin)
	case os.Getenv("KBENCH_PROFILE") != "":
		return fmt.Errorf("-profile with KBENCH_PROFILE=%s in the environment: kbab sets KBENCH_PROFILE for the profile boots alone (a timed boot with it is slowed); unset it", os.Getenv("KBENCH_PROFILE"))
	}
	return nil
}

// profiledBoot is a finished profile boot, as kbab.json records it.
type profiledBoot struct {
	Boot     int       `json:"boot"` // 1-based among the profile boots
	Side     string    `json:"side"`
	Seconds  float64   `json:"seconds"`
	Finished time.Time `json:"finished"`
	BootIDs  []string  `json:"boot_ids"`
	Retry    string    `json:"retry,omitempty"`
}

// profileSide is the kernel, A or B, of profile boot j: ABBA, as the
// timed boots of an A/B (balancedOrder).
func profileSide(j int) string { return []string{"A", "B"}[balancedOrder(j, 2)] }

// profileBootName is profile boot j's (0-based) name in files: p01, p02.
func profileBootName(j int) string { return fmt.Sprintf("p%02d", j+1) }

// profileRel is where profile boot j's profiles are once it finished,
// relative to -out.
func profileRel(j int) string {
	return filepath.Join("profiles", profileSide(j), profileBootName(j))
}

// checkProfiled makes sure the finished profile boots add up, as check
// does the timed ones; ids holds the timed boots' ids.
func (st *state) checkProfiled(ids map[string]int) error {
	if st.Settings.Profile != 0 && st.Settings.Profile < profileMin {
		return fmt.Errorf("settings.profile is %d: want 0 or %d or more", st.Settings.Profile, profileMin)
	}
	if len(st.Profiled) > 2*st.Settings.Profile {
		return fmt.Errorf("profiled lists %d profile boots: want at most the %d of settings.profile %d", len(st.Profiled), 2*st.Settings.Profile, st.Settings.Profile)
	}
	for j, p := range st.Profiled {
		at := fmt.Sprintf("profiled[%d]", j)
		switch {
		case p.Boot != j+1:
			return fmt.Errorf("%s is profile boot %d: want %d (boots finish in order)", at, p.Boot, j+1)
		case p.Side != profileSide(j):
			return fmt.Errorf("%s (profile boot %d) is side %q: want %q, its place in the ABBA order", at, p.Boot, p.Side, profileSide(j))
		case !(p.Seconds >= 0):
			return fmt.Errorf("%s (profile boot %d) took %v seconds: want 0 or more", at, p.Boot, p.Seconds)
		case len(p.BootIDs) == 0:
			return fmt.Errorf("%s (profile boot %d) has no boot_ids: want the boot ids its output printed", at, p.Boot)
		}
		for _, id := range p.BootIDs {
			if _, dup := ids[id]; dup || id == "" {
				return fmt.Errorf("%s (profile boot %d) has boot id %q, which another boot had too or which is blank: want a fresh boot's", at, p.Boot, id)
			}
			ids[id] = -p.Boot
		}
	}
	return nil
}

// runProfileBoots runs the profile boots not yet finished; ok is false
// where the run stops, with its exit status.
func (d *driver) runProfileBoots(sig <-chan os.Signal) (code int, ok bool) {
	total := 2 * d.st.Settings.Profile
	if total == 0 {
		return 0, true
	}
	if err := d.cutUnrecorded(); err != nil {
		fmt.Fprintf(d.stderr, "kbab: %v\n", err)
		return exitUsage, false
	}
	for j := len(d.st.Profiled); j < total; j++ {
		s := profileSide(j)
		name := fmt.Sprintf("profile boot %d of %d", j+1, total)
		if got := received(sig); got != nil {
			fmt.Fprintf(d.stderr, "kbab: %v before %s; rerun the same command to resume\n", got, name)
			return exitInterrupted, false
		}
		fmt.Fprintf(d.stderr, "kbab: %s: %s (%s), KBENCH_PROFILE; elapsed %s\n", name, s, describe(d.kernelOf(s)), d.elapsed())
		code, err := d.retried(name, s, func(retry string) (int, error) { return d.profileBoot(j, name, sig, retry) })
		if err != nil {
			fmt.Fprintf(d.stderr, "kbab: %v\nkbab: %d of %d profile boots finished; rerun the same command to resume\n", err, len(d.st.Profiled), total)
			return code, false
		}
		fmt.Fprintf(d.stderr, "kbab: %s: %s finished in %s; elapsed %s\n", name, s,
			round(seconds(d.st.Profiled[len(d.st.Profiled)-1].Seconds)), d.elapsed())
	}
	// Empty once every boot moved its profiles out: not an error where
	// a failed try's are still in it.
	os.Remove(filepath.Join(d.cfg.out, "profiles", "tmp"))
	return 0, true
}

// profileBoot runs profile boot j (0-based) and records it, or returns
// why it did not finish and kbab's exit status for that.
func (d *driver) profileBoot(j int, name string, sig <-chan os.Signal, retry string) (int, error) {
	s := profileSide(j)
	base := filepath.Join(d.cfg.out, "boots", profileBootName(j)+"-"+s)
	tmp, err := filepath.Abs(filepath.Join(d.cfg.out, "profiles", "tmp", profileBootName(j)+"-"+s))
	if err != nil {
		return exitUsage, err
	}
	// An earlier try's profiles are never this try's.
	if err := d.cutAside(tmp); err != nil {
		return exitUsage, err
	}
	if err := os.MkdirAll(tmp, 0o777); err != nil {
		return exitUsage, err
	}
	// The whole command, as a timed boot of the fixed design (or of a
	// planned run's pilot) runs it.
	count := 1
	if d.design != nil {
		count = d.design.Opts.Count
	}
	b, ids, code, err := d.runGoTests(name, s, append(os.Environ(), "KBENCH_PROFILE="+tmp), d.wholeCommand(count), base, sig)
	if err != nil {
		return code, err
	}
	dst := filepath.Join(d.cfg.out, profileRel(j))
	if err := os.MkdirAll(filepath.Dir(dst), 0o777); err != nil {
		return exitUsage, err
	}
	if err := d.cutAside(dst); err != nil {
		return exitUsage, err
	}
	// Moved, then recorded: a crash between the two leaves a directory
	// kbab.json does not record, which cutUnrecorded moves aside.
	if err := os.Rename(tmp, dst); err != nil {
		return exitUsage, err
	}
	d.st.Profiled = append(d.st.Profiled, profiledBoot{Boot: j + 1, Side: s, Seconds: b.took.Seconds(), Finished: time.Now().UTC(), BootIDs: ids, Retry: retry})
	if err := d.st.write(d.statePath); err != nil {
		return exitUsage, err
	}
	return 0, nil
}

// cutUnrecorded moves each boot directory of profiles/A and profiles/B
// that kbab.json does not record as a finished profile boot to
// profiles/cut/, naming it.
func (d *driver) cutUnrecorded() error {
	keep := map[string]bool{}
	for j := range d.st.Profiled {
		keep[profileRel(j)] = true
	}
	for _, s := range []string{"A", "B"} {
		entries, err := os.ReadDir(filepath.Join(d.cfg.out, "profiles", s))
		if errors.Is(err, os.ErrNotExist) {
			continue
		} else if err != nil {
			return err
		}
		for _, e := range entries {
			rel := filepath.Join("profiles", s, e.Name())
			if keep[rel] {
				continue
			}
			fmt.Fprintf(d.stderr, "kbab: %s: no finished profile boot in kbab.json has it (a boot cut short); moving it to profiles/cut/\n", rel)
			if err := d.cutAside(filepath.Join(d.cfg.out, rel)); err != nil {
				return err
			}
		}
	}
	return nil
}

// cutAside moves p, where it exists, to profiles/cut/<side>-<name>.N,
// out of the directories the section reads.
func (d *driver) cutAside(p string) error {
	if _, err := os.Lstat(p); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	cut := filepath.Join(d.cfg.out, "profiles", "cut")
	if err := os.MkdirAll(cut, 0o777); err != nil {
		return err
	}
	stem := filepath.Base(filepath.Dir(p)) + "-" + filepath.Base(p)
	for n := 1; ; n++ {
		to := filepath.Join(cut, fmt.Sprintf("%s.%d", stem, n))
		if _, err := os.Lstat(to); err == nil {
			continue
		}
		return os.Rename(p, to)
	}
}

// profileSection is the perf-profile section of the finished profile
// boots for the report (abreport.RowProfiles, kbcompare's
// -profiles-old profiles/A -profiles-new profiles/B) of rep; nil
// without -profile; its directories and error into n. Profiles that
// cannot be read leave the verdicts standing: the section says why it
// is missing, on the report and stderr.
func (d *driver) profileSection(rep *abstat.Report, n *abreport.RunNotes) []abreport.RowProfile {
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
