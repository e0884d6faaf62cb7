//go:build linux

package region

import (
	"flag"
	"fmt"
	"testing"
)

// Measure runs f as testing.Benchmark does, but for n ops, and returns
// the result: for tests that check what a row's region reports. It sets
// the test binary's -test.benchtime for the call, so it must not run in
// parallel with other benchmarks.
func Measure(tb testing.TB, n int, f func(*testing.B)) testing.BenchmarkResult {
	tb.Helper()
	bt := flag.Lookup("test.benchtime")
	if bt == nil {
		tb.Fatal("region.Measure: no -test.benchtime flag (not a test binary?)")
	}
	old := bt.Value.String()
	if err := flag.Set("test.benchtime", fmt.Sprintf("%dx", n)); err != nil {
		tb.Fatal(err)
	}
	defer flag.Set("test.benchtime", old)
	return testing.Benchmark(f)
}
