//go:build linux

package abstat

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// resultText is a small result file around line, which is line 5.
func resultText(line string) string {
	return "goos: linux\npkg: example.com/fake\nUnit widgets better=higher\nBenchmarkOp-2 \t 1000\t 100 ns/op\n" + line + "\nPASS\n"
}

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
		_, _, err := Read(p)
		if err == nil || !strings.HasPrefix(err.Error(), p+":5: ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.60q: error %v, want %s%s", c.line, err, p, c.want)
		}
	}
	// A unit that is no amount may be negative.
	p := writeTemp(t, "new.txt", resultText("BenchmarkOp-2 \t 1000\t 100 ns/op\t -4 widgets"))
	if _, _, err := Read(p); err != nil {
		t.Errorf("a negative widgets: %v, want a measurement", err)
	}
	empty := writeTemp(t, "empty.txt", "goos: linux\nPASS\n")
	if _, _, err := Read(empty); err == nil || err.Error() != empty+": no benchmark results in its 2 lines (want `go test -bench` output)" {
		t.Errorf("no results: %v", err)
	}
}

// TestAmount: which units cannot be negative.
func TestAmount(t *testing.T) {
	for u, want := range map[string]bool{"sec/op": true, "B/op": true, "allocs/op": true, "B/s": true, "loops/s": true,
		"tps": true, "p50-us": true, "lat-sec": true, "cs/op": true, "widgets": false, "score": false, "delta-%": false} {
		if got := Amount(u); got != want {
			t.Errorf("Amount(%q) = %v, want %v", u, got, want)
		}
	}
}

// TestBoots: results belong to the boot named by the last boot id line
// above them, a boot whose rows all failed is still a boot, and lines
// before any boot id are a boot of their own.
func TestBoots(t *testing.T) {
	text := "pkg: example.com/fake\nBenchmarkOp-2 \t 1\t 5 ns/op\n" +
		BootIDLine + "b1\nBenchmarkOp-2 \t 1\t 6 ns/op\nBenchmarkOp-2 \t 1\t 7 ns/op\n" +
		BootIDLine + "b2\n--- FAIL: BenchmarkOp\nFAIL\n" +
		BootIDLine + "b1\nBenchmarkOp-2 \t 1\t 8 ns/op\n"
	files, _, err := Read(writeTemp(t, "a.txt", text))
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
