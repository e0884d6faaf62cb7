//go:build linux

package skip

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// LinePrefix starts the line a skipped row leaves in the output, whatever
// -v: go test prints a benchmark's "--- SKIP" only with -v, so without
// this line a row that skips on one kernel would simply be missing from
// that kernel's result file. The line is
//
//	# kbench skip PKG NAME: REASON
//
// PKG is the test binary's import path (go test prints its "pkg:" line
// only when a row first runs, so a package whose rows all skip has
// none), NAME the row as go test prints its result (BenchmarkX/a=1-2,
// with the -GOMAXPROCS suffix where GOMAXPROCS is not 1), REASON the
// skip's message on one line. The key holds blanks, so that benchstat,
// benchfmt and fingerprint.Parse skip the line; internal/abfile reads it
// (ParseLine) as the row's SKIP in that boot.
const LinePrefix = "# kbench skip "

// maxReason bounds a reason on its line (result files' lines are read up
// to 64 KiB).
const maxReason = 2000

// lineOut is where skip lines go: the benchmarks' standard output.
var lineOut io.Writer = os.Stdout

var lineMu sync.Mutex

// Now skips tb as tb.Skip(args...) does, and, where tb is a benchmark
// row, first prints its skip line (LinePrefix). Every skip of a row goes
// through Now or Nowf (IfNotSupported and NeedProcs do), so that each
// leaves its line; TestEverySkipRecorded keeps b.Skip out of the rows.
func Now(tb testing.TB, args ...any) {
	tb.Helper()
	msg := strings.TrimSuffix(fmt.Sprintln(args...), "\n")
	record(tb, msg)
	tb.Skip(msg)
}

// Nowf is Now with a format, as tb.Skipf.
func Nowf(tb testing.TB, format string, args ...any) {
	tb.Helper()
	msg := fmt.Sprintf(format, args...)
	record(tb, msg)
	tb.Skip(msg)
}

// record prints tb's skip line if tb is a benchmark row.
func record(tb testing.TB, reason string) {
	if _, ok := tb.(*testing.B); !ok {
		return
	}
	lineMu.Lock()
	defer lineMu.Unlock()
	fmt.Fprintln(lineOut, Line(binaryPkg(), rowName(tb.Name()), reason))
}

// rowName is a benchmark's name as go test prints its results: with the
// -GOMAXPROCS suffix where GOMAXPROCS is not 1.
func rowName(name string) string {
	if p := runtime.GOMAXPROCS(0); p != 1 {
		return name + "-" + strconv.Itoa(p)
	}
	return name
}

// binaryPkg is the running test binary's import path: its build info's
// path (example.com/m/pkg.test) without ".test".
func binaryPkg() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Path != "" {
		return strings.TrimSuffix(bi.Path, ".test")
	}
	return "unknown"
}

// Line is the skip line of row name of package pkg; a reason's control
// characters (a multi-line message) become blanks, and a long one is cut.
func Line(pkg, name, reason string) string {
	reason = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, reason)
	if len(reason) > maxReason {
		reason = strings.ToValidUTF8(reason[:maxReason], "") + "..."
	}
	return LinePrefix + pkg + " " + name + ": " + reason
}

// ParseLine reads a skip line: ok is false for any other line.
func ParseLine(l string) (pkg, name, reason string, ok bool) {
	rest, ok := strings.CutPrefix(l, LinePrefix)
	if !ok {
		return "", "", "", false
	}
	head, reason, ok := strings.Cut(rest, ": ")
	pkg, name, ok2 := strings.Cut(head, " ")
	if !ok || !ok2 || pkg == "" || !strings.HasPrefix(name, "Benchmark") || strings.ContainsAny(name, " \t") {
		return "", "", "", false
	}
	return pkg, name, reason, true
}
