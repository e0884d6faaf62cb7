//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/abplan"
)

// profileDirs lists the boot directories of side's profiles.
func profileDirs(t *testing.T, out, side string) []string {
	t.Helper()
	es, err := os.ReadDir(filepath.Join(out, "profiles", side))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// selfTop is the function of the section's first self line.
func selfTop(t *testing.T, report string) string {
	t.Helper()
	_, sec, ok := strings.Cut(report, "\n  self:\n")
	if !ok {
		t.Fatalf("no self form in the report:\n%s", report)
	}
	lines := strings.Split(sec, "\n")
	if len(lines) < 2 {
		t.Fatalf("no self line:\n%s", report)
	}
	f := strings.Fields(lines[1])
	return f[len(f)-1]
}

func TestProfileBootsAddTheSection(t *testing.T) {
	f := newFake(t)
	args := f.args("-b-kernel", f.imgB, "-b-append", "slow", "-profile", "3")
	code, stdout, stderr := f.run(nil, args...)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (B is worse)\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	calls := f.calls()
	if len(calls) != 12 {
		t.Fatalf("%d vmexec calls, want 6 timed and 6 profile boots", len(calls))
	}
	var order []string
	for _, c := range calls[6:] {
		order = append(order, strings.Fields(c)[0])
	}
	if want := "kernel=bzImage-a kernel=bzImage-b kernel=bzImage-b kernel=bzImage-a kernel=bzImage-a kernel=bzImage-b"; strings.Join(order, " ") != want {
		t.Errorf("profile boots' order %v, want ABBAAB", order)
	}
	// The timed files hold the timed boots alone.
	for _, s := range []string{"A", "B"} {
		if n := boots(t, filepath.Join(f.out, s+".txt")); n != 3 {
			t.Errorf("%s.txt holds %d boots, want the 3 timed ones", s, n)
		}
	}
	for s, want := range map[string][]string{"A": {"p01", "p04", "p05"}, "B": {"p02", "p03", "p06"}} {
		if got := profileDirs(t, f.out, s); !slices.Equal(got, want) {
			t.Errorf("profiles/%s holds %v, want %v", s, got, want)
		}
	}
	if want := "kbcompare -profiles-old " + filepath.Join(f.out, "profiles", "A") + " -profiles-new " + filepath.Join(f.out, "profiles", "B"); !strings.Contains(stdout, want) {
		t.Errorf("the report does not say how to get the other forms (%q):\n%s", want, stdout)
	}
	if m, _ := filepath.Glob(filepath.Join(f.out, "boots", "*.profiles")); len(m) > 0 {
		t.Errorf("%v left after every profile boot finished", m)
	}
	if !strings.Contains(stdout, "perf-profile fake Work-2 (worse") || !strings.Contains(stdout, "3+3 boots") {
		t.Errorf("the report lacks Work's perf-profile section of 3+3 boots:\n%s", stdout)
	}
	if top := selfTop(t, stdout); top != injected {
		t.Errorf("the section's top self function is %q, want the injected %s:\n%s", top, injected, stdout)
	}
	for _, w := range []string{"profile boot 1 of 6: A (bzImage-a); elapsed", "profile boot 6 of 6: B finished"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("progress lacks %q:\n%s", w, stderr)
		}
	}
	// A rerun boots nothing and prints the same report.
	code2, stdout2, _ := f.run(nil, args...)
	if code2 != 1 || stdout2 != stdout || len(f.calls()) != 12 {
		t.Errorf("rerun of a finished run: exit %d, %d calls, same report %v; want 1, 12, true", code2, len(f.calls()), stdout2 == stdout)
	}
	// A rerun with another -profile is refused, naming it.
	if code, _, stderr := f.run(nil, f.args("-b-kernel", f.imgB, "-b-append", "slow", "-profile", "4")...); code != exitUsage || !strings.Contains(stderr, `-profile: was "3", now "4"`) {
		t.Errorf("resume with another -profile: exit %d, stderr:\n%s", code, stderr)
	}

	// An A/A's section lists no function beyond the noise: every q above 0.05.
	f = newFake(t)
	code, stdout, stderr = f.run(nil, f.args("-b-kernel", f.imgA, "-profile", "3")...)
	if code != 0 {
		t.Fatalf("A/A: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if strings.Contains(stdout, injected) || !strings.Contains(stdout, "perf-profile fake Work-2") {
		t.Errorf("A/A: the section should list Work without the injected function:\n%s", stdout)
	}
}

// A profile boot that failed keeps its try's profiles beside its
// output (boots/p03-B.try1.profiles), and profiles a crash left in a
// boot's place before kbab.json recorded it are replaced: the section
// reads the finished boots' alone.
func TestCutProfileBootNotMerged(t *testing.T) {
	f := newFake(t)
	args := f.args("-b-kernel", f.imgB, "-b-append", "slow", "-profile", "3")
	f.knob("fail-at", 9) // profile boot 3 (B)
	code, _, stderr := f.run(nil, args...)
	if code != exitBootFailed || !strings.Contains(stderr, "profile boot 3 of 6 (B, bzImage-b slow) failed") || !strings.Contains(stderr, "keeps the 8 finished boots; rerun the same command to retry boot 9") {
		t.Fatalf("a failed profile boot: exit %d, want %d, stderr:\n%s", code, exitBootFailed, stderr)
	}
	// What a try cut short leaves, and a crash between the move and
	// kbab.json's write: a stray row's profiles.
	for _, d := range []string{filepath.Join("boots", "p03-B.profiles"), filepath.Join("profiles", "B", "p03")} {
		if err := fixtureProfiles(filepath.Join(f.out, d), "Stray-2", false, 1); err != nil {
			t.Fatal(err)
		}
	}
	os.Remove(filepath.Join(f.dir, "fail-at"))
	code, stdout, stderr := f.run(nil, args...)
	if code != 1 {
		t.Fatalf("rerun: exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if tried, _ := filepath.Glob(filepath.Join(f.out, "boots", "p03-B.try1.profiles", "*Stray*")); len(tried) == 0 {
		t.Errorf("the failed try's profiles are not in boots/p03-B.try1.profiles")
	}
	for _, s := range []string{"A", "B"} {
		err := filepath.Walk(filepath.Join(f.out, "profiles", s), func(p string, _ os.FileInfo, err error) error {
			if err == nil && strings.Contains(p, "Stray") {
				t.Errorf("%s: a cut boot's profile was kept among the finished boots'", p)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if strings.Contains(stdout, "Stray") || selfTop(t, stdout) != injected {
		t.Errorf("the section after the rerun:\n%s", stdout)
	}
}

func TestProfileOptions(t *testing.T) {
	f := newFake(t)
	for _, c := range []struct {
		args []string
		env  string
		want string
	}{
		{[]string{"-profile", "2"}, "", "-profile 2: want 0 (no profile boots) or 3 or more"},
		{[]string{"-profile", "-1"}, "", "-profile -1: want 0"},
		{[]string{"-profile", "3"}, "/tmp/p", "-profile with KBENCH_PROFILE=/tmp/p in the environment"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			if c.env != "" {
				t.Setenv("KBENCH_PROFILE", c.env)
			}
			code, _, stderr := f.run(nil, f.args(append([]string{"-b-kernel", f.imgB}, c.args...)...)...)
			if code != exitUsage || !strings.Contains(stderr, c.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, exitUsage, c.want)
			}
		})
	}
	if len(f.calls()) != 0 {
		t.Errorf("bad options booted %d times", len(f.calls()))
	}
}

// kbab.json's profile boots are checked as its timed boots are: in
// order, ABBA, after the timed ones, no more than -profile asks for.
func TestProfiledStateChecked(t *testing.T) {
	f := newFake(t)
	if code, _, stderr := f.run(nil, f.args("-b-kernel", f.imgA, "-profile", "3")...); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	b, err := os.ReadFile(filepath.Join(f.out, "kbab.json"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := parseState(b)
	if err != nil {
		t.Fatalf("the state kbab wrote: %v", err)
	}
	if len(st.Boots) != 12 || st.Boots[6].Profile != 1 || st.Boots[11].Profile != 6 {
		t.Fatalf("state has boots %+v, want 6 timed and profile boots 1-6", st.Boots)
	}
	for name, c := range map[string]struct {
		edit func(*state)
		want string
	}{
		"order":    {func(s *state) { s.Boots[7].Profile = 3 }, "boots[7] (boot 8) is profile boot 3: want 2"},
		"side":     {func(s *state) { s.Boots[6].Kernel = "B" }, `boots[6] (boot 7) is kernel "B": want "A", its place in the profile boots' ABBA order`},
		"timed":    {func(s *state) { s.Boots[7].Profile = 0 }, "boots[7] (boot 8) is a timed boot after profile boots"},
		"bad time": {func(s *state) { s.Boots[6].Seconds = -1 }, "took -1 seconds"},
		"too many": {func(s *state) { s.Settings.Profile = 2 }, "boots[10] (boot 11) is profile boot 5: want 5, and at most the 4 of settings.profile 2"},
	} {
		var s state
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		c.edit(&s)
		if err := s.check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: check: %v, want %q", name, err, c.want)
		}
	}
}

// In a planned run the profile boots follow the last planned boot and
// run the pilot's command, at the design's -count.
func TestProfileBootsAfterPlannedRun(t *testing.T) {
	f := newFake(t)
	f.knob("planned", 0)
	f.knob("seed", 36)
	pilot := 2 * abplan.DefaultPilot
	code, stdout, stderr := f.run(nil, f.args("-b-kernel", f.imgA, "-target", "5%", "-budget", "1ms", "-profile", "3")...)
	if code != 0 {
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	calls := f.calls()
	if len(calls) != pilot+6 {
		t.Fatalf("%d boots, want the pilot's %d and 6 profile boots", len(calls), pilot)
	}
	count := fmt.Sprintf("-test.count=%d", abplan.DefaultCount)
	for i, c := range calls[pilot:] {
		if !strings.Contains(c, count) || strings.Contains(c, "-test.bench=^") {
			t.Errorf("profile boot %d: %s, want the pilot's command at %s", i+1, c, count)
		}
	}
	if !strings.Contains(stdout, "Stein's two-stage t-test") || !strings.Contains(stdout, "perf-profile fake Work-2") {
		t.Errorf("the report lacks the design or the section:\n%s", stdout)
	}
}

// Ctrl-C during a profile boot keeps the finished ones; the rerun keeps
// the interrupted try's profiles beside its output, never in the boot's
// directory.
func TestInterruptedProfileBootNotMerged(t *testing.T) {
	f := newFake(t)
	f.knob("hang-at", 8) // profile boot 2 (B)
	sig, _ := interruptOnHang(f)
	args := f.args("-b-kernel", f.imgB, "-b-append", "slow", "-profile", "3")
	code, _, stderr := f.run(sig, args...)
	if code != exitInterrupted || !strings.Contains(stderr, "profile boot 2 of 6 (B): interrupt") || !strings.Contains(stderr, "keeps the 7 finished boots") {
		t.Fatalf("exit %d, want %d, stderr:\n%s", code, exitInterrupted, stderr)
	}
	os.Remove(filepath.Join(f.dir, "hang-at"))
	code, stdout, stderr := f.run(nil, args...)
	if code != 1 {
		t.Fatalf("rerun: exit %d, want 1\n%s\n%s", code, stdout, stderr)
	}
	if hung, _ := filepath.Glob(filepath.Join(f.out, "boots", "p02-B.try1.profiles", "fake.Hung-2.run*")); len(hung) == 0 {
		t.Errorf("the interrupted try's profiles are not in boots/p02-B.try1.profiles")
	}
	for _, s := range []string{"A", "B"} {
		if m, _ := filepath.Glob(filepath.Join(f.out, "profiles", s, "*", "fake.Hung-2.*")); len(m) > 0 {
			t.Errorf("the interrupted try's profiles were merged into a finished boot's: %v", m)
		}
	}
	if strings.Contains(stdout, "Hung") {
		t.Errorf("the section has the interrupted try's row:\n%s", stdout)
	}
}
