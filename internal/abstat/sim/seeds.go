//go:build linux

package sim

import (
	"regexp"
	"testing"

	"github.com/kbench/kbench/internal/abfile"
)

// FuzzSeeds adds to the fuzz targets of the result file readers (abfile,
// abstat) real result files (the fixtures, the suite's first lines), the
// lines that are no measurement, and boots, pulses, failures and skips.
func FuzzSeeds(f *testing.F) {
	for _, name := range []string{"syscall-a-run1.txt", "syscall-b-run2.txt", "fail-old.txt", "fail-new.txt", "fail-new-v.txt"} {
		f.Add(Data(f, name))
	}
	suite := Data(f, SuiteFile)
	f.Add(suite[:8192])
	for _, l := range []string{"BenchmarkOp-2 \t 1000\t NaN ns/op", "BenchmarkOp-2 \t 0\t 100 ns/op", "BenchmarkOp-2 \t 1000\t -5 ns/op",
		"BenchmarkOp-2 \t 1000\t 100 ns/op\t 6 slow/op", "Unit loops/s better=lower"} {
		f.Add([]byte(ResultText(l)))
	}
	f.Add([]byte(abfile.BootIDLine + "b1\n# kbench pulse.earlier: protect at x\npkg: a/b\nBenchmarkX-2 1 5 ns/op\n--- SKIP: BenchmarkY\n" +
		abfile.BootIDLine + "b2\nBenchmarkX-2 \t--- FAIL: BenchmarkX-2\nFAIL\ta/b\t0.1s\n"))
	f.Add([]byte(abfile.BootIDLine + "b1\n# kbench skip a/b BenchmarkY/n=1-2: no such feature\npkg: a/b\nBenchmarkX-2 1 5 ns/op\n" +
		"BenchmarkY/n=2-2 \t# kbench skip a/b BenchmarkY/n=2-2: later\n--- SKIP: BenchmarkY/n=3\n    y_test.go:3: why\n"))
}

// ResultText is a small result file around line, which is line 5.
func ResultText(line string) string {
	return "goos: linux\npkg: example.com/fake\nUnit widgets better=higher\nBenchmarkOp-2 \t 1000\t 100 ns/op\n" + line + "\nPASS\n"
}

// ErrorForm is what every error of abfile.Read must look like: the file, a
// line where one is at fault, and what was wanted.
func ErrorForm(p string) *regexp.Regexp {
	return regexp.MustCompile(`^` + regexp.QuoteMeta(p) + `(:[1-9][0-9]*)?: .*want`)
}
