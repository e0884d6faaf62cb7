//go:build linux

package seccompbench

import (
	"os"
	"testing"

	"github.com/kbench/kbench/internal/benchmain"
	"github.com/kbench/kbench/internal/options"
)

var (
	filterCounts = options.Ints("KBENCH_FILTERS", "0,1,4,32", 0, 1000,
		"filter counts for `seccompbench` `Syscall` (UnixBench's report ran 1, 4 and 32)")
	victimCPU = options.Int("KBENCH_VICTIM_CPU", "", 0, 4095,
		"the CPU `seccompbench` `Bystander` pins its victim to (unset: the first usable CPU); loaders take the other usable CPUs")
)

// initial is the seccomp state of the main thread and of a fresh thread
// before any test or benchmark ran.
var initial Containment
var initialErr error

func TestMain(m *testing.M) {
	initial, initialErr = ReadContainment()
	os.Exit(benchmain.Main(m))
}

// contained fails tb unless the main thread and a fresh thread still show
// the state they started with: filters and no_new_privs must have died
// with the throw-away threads.
func contained(tb testing.TB) {
	tb.Helper()
	if initialErr != nil {
		tb.Fatalf("reading the initial seccomp state: %v", initialErr)
	}
	now, err := ReadContainment()
	if err != nil {
		tb.Fatal(err)
	}
	if err := initial.Check(now); err != nil {
		tb.Fatal(err)
	}
}

// newLoader skips where seccomp filters are unavailable and notes a kernel
// that cannot show the filter count.
func newLoader(tb testing.TB) *Loader {
	tb.Helper()
	skipUnsupported(tb)
	l, err := NewLoader()
	if err != nil {
		tb.Fatal(err)
	}
	if !l.FiltersKnown {
		tb.Logf("note: this kernel's status files have no Seccomp_filters line (Linux 5.9+); filter counts are checked through each load's result and Seccomp: 2 only")
	}
	return l
}
