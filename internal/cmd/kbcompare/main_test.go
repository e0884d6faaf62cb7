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
		{"bad format", []string{"-format", "html", oldPath, oldPath}, 2, "-format accepts text, brief or json"},
		{"csv dropped", []string{"-format", "csv", oldPath, oldPath}, 2, "-format accepts text, brief or json, not \"csv\""},
		{"markdown dropped", []string{"-format", "markdown", oldPath, oldPath}, 2, "-format accepts text, brief or json, not \"markdown\""},
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
// must be (exit 2), never a hang: NaN made kbcompare
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
			{"-format", "brief", goodPath, badPath}, {"-format", "json", goodPath, badPath},
			{"-plot", t.TempDir(), goodPath, badPath},
		} {
			var out, errOut bytes.Buffer
			if code := run(args, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), where) {
				t.Errorf("%q: exit %d, stderr %q; want 2 and %q", args, code, errOut.String(), where)
			}
		}
	}
}

// TestGitBisectGone: -git-bisect and -bisect, however spelled, exit 128
// naming kbab's bisection, so that an old `git bisect run` script stops
// (2 would read as "bad").
func TestGitBisectGone(t *testing.T) {
	f := resultFile{lines: samples("Op-2", 8, "ns/op", around(100, 0.01))}
	p := f.write(t, "a.txt")
	for _, args := range [][]string{{"-git-bisect", p, p, p}, {"--git-bisect=1", p, p, p}, {p, p, p, "-bisect"}, {"-bisect=false", p, p}} {
		var out, errOut bytes.Buffer
		if code := run(args, &out, &errOut); code != 128 || !strings.Contains(errOut.String(), "kbab -tree DIR -bisect") {
			t.Errorf("%q: exit %d, stderr %q; want 128 naming kbab -tree DIR -bisect", args, code, errOut.String())
		}
	}
}
