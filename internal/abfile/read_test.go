//go:build linux

package abfile_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/abfile"
	"github.com/kbench/kbench/internal/abstat/sim"
)

func writeTemp(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestNotAMeasurement: a value that is no measurement is an error that
// names the file, the line and what a value there must be, never a
// sample. A NaN made kbcompare run until killed (issue 28).
func TestNotAMeasurement(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{"BenchmarkOp-2 \t 1000\t NaN ns/op", ":5: NaN ns/op is not a measurement: want a finite number"},
		{"BenchmarkOp-2 \t 1000\t +Inf ns/op", ":5: +Inf ns/op is not a measurement: want a finite number"},
		{"BenchmarkOp-2 \t 1000\t 100 ns/op\t -Inf loops/s", ":5: -Inf loops/s is not a measurement: want a finite number"},
		{"BenchmarkOp-2 \t 1000\t 1e308 MB/s", ":5: 1e+308 MB/s is not a measurement: want a finite number"},
		{"BenchmarkOp-2 \t 1000\t -5 ns/op", ":5: -5 ns/op is not a measurement: want a value >= 0 (sec/op is a time, size, count or rate)"},
		{"BenchmarkOp-2 \t 1000\t 100 ns/op\t -3 loops/s", ":5: -3 loops/s is not a measurement: want a value >= 0"},
		{"BenchmarkOp-2 \t 1000\t 100 ns/op\t -2 tps", ":5: -2 tps is not a measurement: want a value >= 0"},
		{"BenchmarkOp-2 \t 1000\t 100 ns/op\t -2 p50-us", ":5: -2 p50-us is not a measurement: want a value >= 0"},
		{"BenchmarkOp-2 \t 0\t 100 ns/op", ":5: iteration count 0 is not a measurement: want at least 1"},
		{"BenchmarkOp-2 \t -3\t 100 ns/op", ":5: iteration count -3 is not a measurement: want at least 1"},
		{"BenchmarkOp-2 \t 1000\t 12x.5 ns/op", ":5: parsing measurement: invalid syntax (want a go test -bench result line)"},
		{"BenchmarkOp-2 \t 1000\t 100", ":5: missing units (want a go test -bench result line)"},
		{"# kbench kernel.cmdline: " + strings.Repeat("x", 70000), ":5: a line of 70025 bytes: want go test output, whose lines benchfmt reads up to 64 KiB"},
	} {
		p := writeTemp(t, "new.txt", resultText(c.line))
		_, _, err := abfile.Read(p)
		if err == nil || !strings.HasPrefix(err.Error(), p+":5: ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.60q: error %v, want %s%s", c.line, err, p, c.want)
		}
	}
	// A unit that is no amount may be negative.
	p := writeTemp(t, "new.txt", resultText("BenchmarkOp-2 \t 1000\t 100 ns/op\t -4 widgets"))
	if _, _, err := abfile.Read(p); err != nil {
		t.Errorf("a negative widgets: %v, want a measurement", err)
	}
	empty := writeTemp(t, "empty.txt", "goos: linux\nPASS\n")
	if _, _, err := abfile.Read(empty); err == nil || err.Error() != empty+": no benchmark results in its 2 lines (want `go test -bench` output)" {
		t.Errorf("no results: %v", err)
	}
}

// TestAmount: which units cannot be negative.
func TestAmount(t *testing.T) {
	for u, want := range map[string]bool{"sec/op": true, "B/op": true, "allocs/op": true, "B/s": true, "loops/s": true,
		"tps": true, "p50-us": true, "lat-sec": true, "cs/op": true, "widgets": false, "score": false, "delta-%": false} {
		if got := abfile.Amount(u); got != want {
			t.Errorf("abfile.Amount(%q) = %v, want %v", u, got, want)
		}
	}
}

// TestBoots: results belong to the boot named by the last boot id line
// above them, a boot whose rows all failed is still a boot, and lines
// before any boot id are a boot of their own.
func TestBoots(t *testing.T) {
	text := "pkg: example.com/fake\nBenchmarkOp-2 \t 1\t 5 ns/op\n" +
		abfile.BootIDLine + "b1\nBenchmarkOp-2 \t 1\t 6 ns/op\nBenchmarkOp-2 \t 1\t 7 ns/op\n" +
		abfile.BootIDLine + "b2\n--- FAIL: BenchmarkOp\nFAIL\n" +
		abfile.BootIDLine + "b1\nBenchmarkOp-2 \t 1\t 8 ns/op\n"
	files, _, err := abfile.Read(writeTemp(t, "a.txt", text))
	if err != nil {
		t.Fatal(err)
	}
	f := files[0]
	if got := strings.Join(f.Boots, ","); got != ",b1,b2" {
		t.Errorf("boots %q, want \",b1,b2\"", got)
	}
	var got []string
	for _, r := range f.Results {
		got = append(got, r.Boot)
	}
	if strings.Join(got, ",") != ",b1,b1,b1" {
		t.Errorf("result boots %v, want \"\", b1, b1, b1", got)
	}
}

// read reads one fixture of package sim.
func read(t *testing.T, name string) *abfile.File {
	t.Helper()
	files, _, err := abfile.Read(sim.File(t, name))
	if err != nil {
		t.Fatal(err)
	}
	return files[0]
}

// TestOneRun: a real run of one row, one boot: its five results, each in
// the boot its fingerprint names, with the file's fingerprint.
func TestOneRun(t *testing.T) {
	f := read(t, "syscall-a-run1.txt")
	const id = "87b98963-59b2-481c-b4ec-92094d516b8c"
	if len(f.Boots) != 1 || f.Boots[0] != id || len(f.Results) != 5 || len(f.Outcomes) != 0 {
		t.Fatalf("boots %q, %d results, outcomes %v", f.Boots, len(f.Results), f.Outcomes)
	}
	fields := map[string]string{}
	for _, fd := range f.Fields {
		fields[fd.Key] = fd.Value
	}
	if fields[abfile.BootIDKey] != id || fields["kernel.release"] != "6.18.44-fc-v657" {
		t.Errorf("file fields %v", fields)
	}
	for _, r := range f.Results {
		if r.Name != sim.SyscallRow || r.Boot != id || r.Config["pkg"] != "github.com/kbench/kbench/seccompbench" || len(r.Values) != 2 {
			t.Errorf("result %+v", r)
		}
	}
	if !f.SingleValued("pkg") || f.SingleValued("goos") != (f.Config["goos"] != nil) {
		t.Errorf("pkg single-valued %v", f.SingleValued("pkg"))
	}
}

// TestFailures: the real failing run (testdata/README.md): the row that
// failed on its name line five times, the one that failed before any
// iteration, their parent marked as such, the test binary's FAIL, each
// FAIL with its message (go test -v prints a message above its FAIL
// line as well as below: the first FAIL takes none of those above).
func TestFailures(t *testing.T) {
	for _, name := range []string{"fail-new.txt", "fail-new-v.txt"} {
		f := read(t, name)
		var got []string
		for _, o := range f.Outcomes {
			if name == "fail-new-v.txt" {
				o.Reason = "" // compared below
			}
			got = append(got, fmt.Sprintf("%d %s %s %v %s", o.Kind, o.Pkg, o.Name, o.Parent, o.Reason))
		}
		const (
			flows16 = "1 example.com/failbench BenchmarkTCPCRR/flows=16/mm=separate-2 false fail_test.go:17: connection reset after the first transaction"
			flows4  = "1 example.com/failbench BenchmarkTCPCRR/flows=4/mm=shared false fail_test.go:24: socket: address family not supported"
			parent  = "1 example.com/failbench BenchmarkTCPCRR true "
			binary  = "3 example.com/failbench  false "
		)
		want := []string{flows16, flows16, flows16, flows16, flows16, flows4, parent, binary}
		if name == "fail-new-v.txt" {
			for i := range 6 {
				want[i] = strings.TrimSuffix(want[i], want[i][strings.Index(want[i], " fail_test.go"):]) + " "
			}
			if f.Outcomes[0].Reason != "fail_test.go:17: connection reset after the first transaction" {
				t.Errorf("%s: first FAIL's message %q", name, f.Outcomes[0].Reason)
			}
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: outcomes\n%s\nwant\n%s", name, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if len(f.Results) != 5 {
			t.Errorf("%s: %d results, want 5", name, len(f.Results))
		}
	}
}

// TestSuite: the whole-suite fixture reads as its rows (every row of
// .ci/benchmarks.txt that ran, ten samples each) in one boot, with each
// package's go test time.
func TestSuite(t *testing.T) {
	f := read(t, sim.SuiteFile)
	rows := map[string]int{}
	for _, r := range f.Results {
		rows[r.Config["pkg"]+" "+r.Name]++
	}
	if len(f.Results) != 860 || len(rows) != 86 || len(f.Boots) != 1 || len(f.Outcomes) != 0 || len(f.Passed) < 6 {
		t.Errorf("%d results in %d rows, %d boots, %d outcomes, %d ok lines", len(f.Results), len(rows), len(f.Boots), len(f.Outcomes), len(f.Passed))
	}
	for k, n := range rows {
		if n != 10 {
			t.Errorf("%s: %d samples, want 10", k, n)
		}
	}
}

// TestSkips: skip lines (package skip) are SKIP outcomes with their
// package, row and reason, in the boot above them, also where go test
// printed no pkg: line (every row of the package skipped) and where one
// lands on a row's name line; go test -v's --- SKIP takes its reason from
// the lines below, or where none follow, from the log lines above.
func TestSkips(t *testing.T) {
	text := abfile.BootIDLine + "b1\n" +
		"# kbench skip example.com/m/allskip BenchmarkA/n=1-2: no such feature: ENOSYS\n" +
		"PASS\nok  \texample.com/m/allskip\t0.01s\n" +
		abfile.BootIDLine + "b2\ngoos: linux\npkg: example.com/m/some\n" +
		"BenchmarkB/n=1-2 \t 10\t 100 ns/op\n" +
		"BenchmarkB/n=2-2 \t# kbench skip example.com/m/some BenchmarkB/n=2-2: went away\n" +
		"--- SKIP: BenchmarkB/n=3\n    b_test.go:9: needs root\n" +
		"# kbench skip example.com/m/some BenchmarkC: parent skipped\n" +
		"BenchmarkB/n=4\n    b_test.go:12: logged above\n--- SKIP: BenchmarkB/n=4\nPASS\n"
	files, _, err := abfile.Read(writeTemp(t, "s.txt", text))
	if err != nil {
		t.Fatal(err)
	}
	f := files[0]
	var got []string
	for _, o := range f.Outcomes {
		got = append(got, fmt.Sprintf("%d %s %s %s %d %s", o.Kind, o.Pkg, o.Name, o.Boot, o.Line, o.Reason))
	}
	want := []string{
		"2 example.com/m/allskip BenchmarkA/n=1-2 b1 2 no such feature: ENOSYS",
		"2 example.com/m/some BenchmarkB/n=2-2 b2 9 went away",
		"2 example.com/m/some BenchmarkB/n=3 b2 10 b_test.go:9: needs root",
		"2 example.com/m/some BenchmarkC b2 12 parent skipped",
		"2 example.com/m/some BenchmarkB/n=4 b2 15 b_test.go:12: logged above",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("outcomes\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if strings.Join(f.Boots, ",") != "b1,b2" || len(f.Results) != 1 {
		t.Errorf("boots %q, %d results", f.Boots, len(f.Results))
	}
	for _, fd := range f.Fields {
		if fd.Key != abfile.BootIDKey {
			t.Errorf("field %+v (a skip line is no fingerprint line)", fd)
		}
	}
}

// TestWithoutProcs: the -GOMAXPROCS suffix rule.
func TestWithoutProcs(t *testing.T) {
	for in, want := range map[string]string{"X/a=1-2": "X/a=1", "X-16": "X", "X/a=1": "X/a=1", "X/a=-1-2": "X/a=-1", "X-": "X-"} {
		if got := abfile.WithoutProcs(in); got != want {
			t.Errorf("WithoutProcs(%q) = %q, want %q", in, got, want)
		}
	}
	if id, ok := abfile.BootID(abfile.BootIDLine + " b1 "); !ok || id != "b1" {
		t.Errorf("BootID = %q, %v", id, ok)
	}
}

// resultText is a small result file around line, which is line 5.
func resultText(line string) string {
	return "goos: linux\npkg: example.com/fake\nUnit widgets better=higher\nBenchmarkOp-2 \t 1000\t 100 ns/op\n" + line + "\nPASS\n"
}
