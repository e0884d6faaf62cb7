//go:build linux

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestExitStatus checks the exit statuses a CI job acts on, and that
// unreadable input names the file and line.
func TestExitStatus(t *testing.T) {
	base := resultFile{units: []string{"Unit loops/s better=higher"}, lines: samples("Op-2", 8, "ns/op", around(100, 0.01), "loops/s", around(1e7, 0.01))}
	slower := resultFile{units: base.units, lines: samples("Op-2", 8, "ns/op", around(120, 0.01), "loops/s", around(0.83e7, 0.01))}
	faster := resultFile{units: base.units, lines: samples("Op-2", 8, "ns/op", around(80, 0.01), "loops/s", around(1.25e7, 0.01))}
	// A result line whose measurement is not a number.
	malformed := resultFile{units: base.units, lines: append(samples("Op-2", 3, "ns/op", around(100, 0.01)), "BenchmarkOp-2 \t 1000\t 12x.5 ns/op")}
	// The same unit declared lower-is-better: contradicts the old file.
	contradicts := resultFile{units: []string{"Unit loops/s better=lower"}, lines: base.lines}
	// Real go test -v output around the results parses; a skip of a
	// benchmark neither side has is no failure.
	verbose := base
	verbose.extra = "BenchmarkSkip\nBenchmarkSkip/a=1\n    x_test.go:3: no feature: ENOSYS\n--- SKIP: BenchmarkSkip/a=1\n" +
		"--- BENCH: BenchmarkOp-2\n    x_test.go:3: note\n"
	// A benchmark that failed, with no results on either side: the run
	// is not "nothing worse".
	failed := base
	failed.extra = "--- FAIL: BenchmarkFail\n    x_test.go:3: boom\nFAIL\nexit status 1\n"

	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.txt")
	if err := os.WriteFile(empty, []byte("goos: linux\nPASS\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	oldPath := base.write(t, "old.txt")
	malPath := malformed.write(t, "new.txt")
	malLine := lineOf(t, malPath, "12x.5")
	conPath := contradicts.write(t, "new.txt")
	conLine := lineOf(t, conPath, "better=lower")

	for _, c := range []struct {
		name   string
		args   []string
		code   int
		stderr string // must appear in stderr
	}{
		{"same", []string{oldPath, oldPath}, 0, ""},
		{"verbose output", []string{oldPath, verbose.write(t, "new.txt")}, 0, ""},
		{"failed benchmark", []string{oldPath, failed.write(t, "new.txt")}, 1, ""},
		{"faster", []string{oldPath, faster.write(t, "new.txt")}, 0, ""},
		{"slower", []string{oldPath, slower.write(t, "new.txt")}, 1, ""},
		{"slower below threshold", []string{"-threshold", "25%", oldPath, slower.write(t, "new.txt")}, 0, ""},
		{"malformed line", []string{oldPath, malPath}, 2, malPath + ":" + malLine + ": parsing measurement"},
		{"contradicting unit metadata", []string{oldPath, conPath}, 2, conPath + ":" + conLine + ": metadata better of unit loops/s already set to higher"},
		{"missing file", []string{oldPath, filepath.Join(dir, "nope.txt")}, 2, "nope.txt: no such file"},
		{"no results", []string{oldPath, empty}, 2, empty + ": no benchmark results"},
		{"bad threshold", []string{"-threshold", "five", oldPath, oldPath}, 2, "-threshold"},
		{"bad format", []string{"-format", "html", oldPath, oldPath}, 2, "-format accepts text, brief, markdown, json or csv"},
		{"bad alpha", []string{"-alpha", "2", oldPath, oldPath}, 2, "-alpha accepts"},
		{"one file", []string{oldPath}, 2, "usage: kbcompare"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(c.args, &out, &errOut)
			if code != c.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, c.code, out.String(), errOut.String())
			}
			if c.stderr != "" && !strings.Contains(errOut.String(), c.stderr) {
				t.Errorf("stderr %q lacks %q", errOut.String(), c.stderr)
			}
			if c.code != 2 && !strings.Contains(out.String(), "verdict: better or worse when q <= 0.05") {
				t.Errorf("no report on stdout:\n%s", out.String())
			}
		})
	}
}

// lineOf returns the 1-based number of the line of path containing s.
func lineOf(t *testing.T, path, s string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(data), "\n") {
		if strings.Contains(l, s) {
			return strconv.Itoa(i + 1)
		}
	}
	t.Fatalf("%s has no line with %q", path, s)
	return ""
}

// TestNotAMeasurementEveryMode: a value that is no measurement stops
// every mode with a message naming the file, the line and what a value
// must be (exit 2; 128 with -git-bisect), never a hang: NaN made kbcompare
// spin until killed (issue 28).
func TestNotAMeasurementEveryMode(t *testing.T) {
	good := resultFile{lines: samples("Op-2", 8, "ns/op", around(100, 0.01))}
	goodPath := good.write(t, "good.txt")
	for _, c := range []struct{ line, want string }{
		{"BenchmarkOp-2 \t 1000\t NaN ns/op", "NaN ns/op is not a measurement: want a finite number"},
		{"BenchmarkOp-2 \t 1000\t -7 ns/op", "-7 ns/op is not a measurement: want a value >= 0"},
		{"BenchmarkOp-2 \t 0\t 100 ns/op", "iteration count 0 is not a measurement: want at least 1"},
	} {
		bad := good
		bad.lines = append(slices.Clone(good.lines), c.line)
		badPath := bad.write(t, "bad.txt")
		where := badPath + ":" + lineOf(t, badPath, c.line) + ": " + c.want
		for _, args := range [][]string{
			{goodPath, badPath}, {badPath, goodPath},
			{"-format", "brief", goodPath, badPath}, {"-format", "markdown", goodPath, badPath},
			{"-format", "json", goodPath, badPath}, {"-format", "csv", goodPath, badPath},
			{"-plot", t.TempDir(), goodPath, badPath},
			{"-git-bisect", goodPath, goodPath, badPath},
		} {
			var out, errOut bytes.Buffer
			code := run(args, &out, &errOut)
			want := 2
			if args[0] == "-git-bisect" {
				want = bisectAbort
			}
			if code != want || !strings.Contains(errOut.String(), where) {
				t.Errorf("%q: exit %d, stderr %q; want %d and %q", args, code, errOut.String(), want, where)
			}
		}
	}
}

// TestBisectUsage: in bisect mode every usage error exits 128 (git
// bisect run stops), never 2 (which it reads as "bad"), however -git-bisect
// is spelled; -format and -plot, which do not apply, are refused.
func TestBisectUsage(t *testing.T) {
	f := resultFile{lines: samples("Op-2", 8, "ns/op", around(100, 0.01))}
	p := f.write(t, "a.txt")
	for _, c := range []struct {
		args   []string
		stderr string
	}{
		{[]string{"-git-bisect", p, p}, "usage: kbcompare -git-bisect"},
		{[]string{"--git-bisect", p, p}, "usage: kbcompare -git-bisect"},
		{[]string{"-git-bisect=true", p, p}, "usage: kbcompare -git-bisect"},
		{[]string{"--git-bisect=1", "-threshold", "x", p, p, p}, "invalid value"},
		{[]string{"-git-bisect=maybe", p, p, p}, "invalid boolean value"},
		{[]string{p, p, p, "-git-bisect"}, "-git-bisect goes before the files"},
		{[]string{"-git-bisect", "-nosuch", p, p, p}, "flag provided but not defined: -nosuch"},
		{[]string{"-git-bisect", "-alpha", "2", p, p, p}, "-alpha accepts"},
		{[]string{"-git-bisect", "-format", "json", p, p, p}, "-format does not apply to -git-bisect"},
		{[]string{"-git-bisect", "-format=text", p, p, p}, "-format does not apply to -git-bisect"},
		{[]string{"--git-bisect", "-plot", t.TempDir(), p, p, p}, "-plot does not apply to -git-bisect"},
		{[]string{"-git-bisect", "-row", "(", p, p, p}, "-row accepts a regular expression"},
		{[]string{"-git-bisect", "-h"}, "usage: kbcompare"},
		{[]string{"-bisect", p, p, p}, "-bisect is now -git-bisect"},
	} {
		var out, errOut bytes.Buffer
		if code := run(c.args, &out, &errOut); code != bisectAbort || !strings.Contains(errOut.String(), c.stderr) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", c.args, code, errOut.String(), bisectAbort, c.stderr)
		}
	}
	// -git-bisect=false is the plain comparison, with its own exit statuses.
	var out, errOut bytes.Buffer
	if code := run([]string{"-git-bisect=false", p, p}, &out, &errOut); code != 0 {
		t.Errorf("-git-bisect=false A A: exit %d, want 0: %s", code, errOut.String())
	}
	if code := run([]string{"-git-bisect=false", p}, &out, &errOut); code != 2 {
		t.Errorf("-git-bisect=false with one file: exit %d, want 2", code)
	}
}
