//go:build linux

// Package benchmain is the TestMain of every benchmark package: it checks
// the KBENCH_* options before anything runs, prints the environment
// fingerprint and the unit metadata once per test binary, then runs the
// tests and benchmarks. When KBENCH_PULSE asks for it, it first runs the
// speculation-control pulse sweep (package pulse) and records it in the
// fingerprint, so any package can be measured after sham or protect pulses.
// It also sets up the instruments every row's timed region carries
// (package region), and records what they measure in the fingerprint.
package benchmain

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/child"
	_ "github.com/kbench/kbench/internal/counters" // kernel counters in every row's region
	"github.com/kbench/kbench/internal/fingerprint"
	_ "github.com/kbench/kbench/internal/kprofile" // the profile instrument (KBENCH_PROFILE)
	"github.com/kbench/kbench/internal/options"
	"github.com/kbench/kbench/internal/pulse"
	"github.com/kbench/kbench/internal/region"
	_ "github.com/kbench/kbench/internal/thread" // holds the main thread from init
	"github.com/kbench/kbench/internal/unit"
)

// Extra adds package-specific facts (a server's version, a pulse sweep)
// to the fingerprint. It runs after options are parsed.
type Extra func() []fingerprint.Field

// Main is called as os.Exit(benchmain.Main(m)) from TestMain.
//
// A test binary that is re-executed as a child process (internal/child)
// runs its role instead, before options, fingerprint or tests.
func Main(m *testing.M, extra ...Extra) int {
	if child.Selected() {
		return child.Main()
	}
	if code := setup(os.Stdout, os.Stderr, extra); code != 0 {
		return code
	}
	return finish(m.Run(), os.Stderr)
}

// finish is the test binary's exit status: m.Run's, or 1 where a row's
// run failed though m.Run passed (a failure in a later -count).
func finish(code int, stderr io.Writer) int {
	if rows := region.Failed(); code == 0 && len(rows) > 0 {
		fmt.Fprintf(stderr, "kbench: %d run(s) of rows failed (%s), though go test's own status passed them: it does not fail the test binary for a failure in a later -count\n",
			len(rows), strings.Join(slices.Compact(rows), ", "))
		return 1
	}
	return code
}

func setup(stdout, stderr io.Writer, extra []Extra) int {
	if err := options.Parse(); err != nil {
		fmt.Fprintf(stderr, "kbench: bad options, nothing was run:\n%v\n", err)
		return 2
	}
	// Read before this binary's own sweep: what earlier ones left.
	earlier := pulse.Earlier()
	pulsed, err := pulse.RunRequested()
	if err != nil {
		fmt.Fprintf(stderr, "kbench: %v\nkbench: no test or benchmark was run\n", err)
		return 1
	}
	fields := fingerprint.Collect("/")
	fields = append(fields, earlier)
	fields = append(fields, pulsed...)
	for _, e := range extra {
		fields = append(fields, e()...)
	}
	measured, err := region.Setup()
	fields = append(fields, measured...)
	if err != nil {
		fmt.Fprintf(stderr, "kbench: %v\nkbench: no test or benchmark was run\n", err)
		return 1
	}
	if err := fingerprint.Write(stdout, fields); err != nil {
		fmt.Fprintf(stderr, "kbench: %v\n", err)
		return 1
	}
	if err := unit.WriteMetadata(stdout); err != nil {
		fmt.Fprintf(stderr, "kbench: %v\n", err)
		return 1
	}
	return 0
}
