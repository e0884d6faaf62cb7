//go:build linux

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A report of kbcompare's schema: one boot-mode row worse in sec/op,
// its rate worse with it and its CPU time up; 3 boots a side.
const threeBoots = `{"schema": "kbcompare/2", "alpha": 0.05, "boots": {"old": 3, "new": 3}, "boot_mode": true,
 "setup": [{"key": "sysctl.net.core.bpf_jit_harden", "old": "", "new": "2"}],
 "rows": [
  {"package": "seccompbench", "name": "Load/shape=stress-ng/loaders=1-2", "unit": "sec/op", "role": "primary", "verdict": "worse", "change": 0.4, "p": 0.01,
   "counters": [{"unit": "cpu-sec/op", "group": "own", "verdict": "up"}, {"unit": "cs/op", "group": "same", "verdict": "~"}]},
  {"package": "seccompbench", "name": "Load/shape=stress-ng/loaders=1-2", "unit": "loads/s", "role": "derived", "verdict": "worse", "change": -0.3, "p": 0.01},
  {"package": "seccompbench", "name": "Load/shape=stress-ng/loaders=1-2", "unit": "B/op", "role": "evidence", "verdict": "", "change": 0.3, "p": 0.02},
  {"package": "seccompbench", "name": "Load/shape=single-2", "unit": "sec/op", "role": "primary", "verdict": "~", "change": 0.01, "p": 0.6},
  {"package": "seccompbench", "name": "Load/shape=single-2", "unit": "cpu-sec/op", "role": "evidence", "verdict": "", "change": 0.2, "p": 0.3}
 ]}`

func check(t *testing.T, report string, args ...string) (int, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(append(args, "-"), strings.NewReader(report), &out, &errb)
	return code, out.String() + errb.String()
}

func TestChecks(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{nil, 0, ""},
		{[]string{"-worse", "^seccompbench Load/shape=stress-ng/", "-rate", "loads/s", "-up", "cpu-sec/op", "-boots", "3", "-setup", "sysctl.net.core.bpf_jit_harden"}, 0, ""},
		{[]string{"-worse", "Load/shape=single"}, 1, `no row matching "Load/shape=single" is worse in sec/op`},
		{[]string{"-worse", "stress-ng", "-unit", "loads/s"}, 1, "is worse in loads/s"}, // a derived rate is not the row's verdict
		{[]string{"-worse", "stress-ng", "-rate", "loops/s"}, 1, "its loops/s is not worse with it"},
		{[]string{"-worse", "stress-ng", "-up", "task-clock"}, 1, "its kernel counter task-clock is not up"},
		{[]string{"-worse", "stress-ng", "-up", "cs/op"}, 1, "its kernel counter cs/op is not up"},
		{[]string{"-worse", "stress-ng", "-up", "B/op"}, 1, "its kernel counter B/op is not up"}, // an evidence unit is no counter
		{[]string{"-boots", "4"}, 1, "want 4 a side as the samples"},
		{[]string{"-setup", "inject.seccomp"}, 1, "setup: inject.seccomp does not differ"},
		{[]string{"-up", "cpu-sec/op"}, 2, "-rate and -up go with -worse"},
		{[]string{"-worse", "("}, 2, "-worse accepts a regular expression"},
	} {
		code, out := check(t, threeBoots, c.args...)
		if code != c.code || !strings.Contains(out, c.want) {
			t.Errorf("reportcheck %q: exit %d, %q; want %d and %q", c.args, code, out, c.code, c.want)
		}
	}
	// One boot a side is not boots as the samples, whatever -boots says.
	code, out := check(t, strings.Replace(threeBoots, `"boot_mode": true`, `"boot_mode": false`, 1), "-boots", "3")
	if code != 1 {
		t.Errorf("-boots 3 without boot mode: exit %d, %q; want 1", code, out)
	}
}

// TestRealReport: kbcompare's own JSON of the sim fixtures' A and B
// (32 injected filters, one boot a side) meets kbcompare-check's checks.
func TestRealReport(t *testing.T) {
	var out, errb bytes.Buffer
	args := []string{"-worse", "^seccompbench Syscall/work=getpid/kind=cached/filters=0-[0-9]+$", "-rate", "loops/s", "-setup", "inject.seccomp", filepath.Join("testdata", "syscall-ab.json")}
	if code := run(args, nil, &out, &errb); code != 0 {
		t.Errorf("reportcheck %q: exit %d\n%s%s", args, code, &out, &errb)
	}
	if code := run([]string{"-boots", "3", filepath.Join("testdata", "syscall-ab.json")}, nil, &out, &errb); code != 1 {
		t.Errorf("-boots 3 on a one-boot report: exit %d; want 1", code)
	}
}

func TestBadReport(t *testing.T) {
	for _, in := range []string{"", "{", `{"schema": "other/1"}`, "[]", "worse: seccompbench Syscall"} {
		if code, out := check(t, in); code != 2 || !strings.Contains(out, "not a kbcompare JSON report") {
			t.Errorf("report %q: exit %d, %q; want 2, not a kbcompare JSON report", in, code, out)
		}
	}
	var out bytes.Buffer
	if code := run([]string{filepath.Join(t.TempDir(), "none.json")}, nil, &out, &out); code != 2 || !strings.Contains(out.String(), "no such file") {
		t.Errorf("a missing file: exit %d, %q; want 2", code, &out)
	}
}

// FuzzReport: any input is a report that the checks judge (0 or 1) or
// one refused as unreadable (2); never a panic.
func FuzzReport(f *testing.F) {
	b, err := os.ReadFile(filepath.Join("testdata", "syscall-ab.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(b))
	f.Add(threeBoots)
	f.Fuzz(func(t *testing.T, in string) {
		var out bytes.Buffer
		code := run([]string{"-worse", ".", "-rate", "loops/s", "-up", "cpu-sec/op", "-boots", "3", "-setup", "x", "-"}, strings.NewReader(in), &out, &out)
		if code < 0 || code > 2 || (code == 1) != strings.Contains(out.String(), "FAIL:") {
			t.Fatalf("exit %d with %q", code, out.String())
		}
	})
}
