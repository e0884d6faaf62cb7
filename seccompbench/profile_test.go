//go:build linux

package seccompbench

import (
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/kprofile"
)

// TestProfileShowsFilters: with KBENCH_PROFILE, the profile of the row
// with 32 filters that run in full on every getpid names the filters
// among the test process's five heaviest kernel functions:
// __seccomp_filter, which runs them, or the filters' own JIT'd code.
func TestProfileShowsFilters(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a benchmark row with profiling")
	}
	skipUnsupported(t)
	profiles, pid := kprofile.ProfileRows(t, "^BenchmarkSyscall$/^work=getpid$/^kind=full$/^filters=32$", "300ms", "KBENCH_FILTERS=32")
	if len(profiles) != 1 {
		t.Fatalf("%d profiles for one row and run: %v", len(profiles), profiles)
	}
	for name, p := range profiles {
		if !strings.HasPrefix(name, "seccompbench.Syscall_work-getpid_kind-full_filters-32") {
			t.Errorf("profile file %q not named after its row", name)
		}
		top := kprofile.KernelFunctions(p, pid)
		if len(top) > 5 {
			top = top[:5]
		}
		found := false
		for _, w := range top {
			if w.Name == "__seccomp_filter" || strings.HasPrefix(w.Name, "bpf_prog_") || strings.HasPrefix(w.Name, "[JIT'd BPF") {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: no seccomp filter frame among the top kernel functions %+v", name, top)
		}
		t.Logf("%s: top kernel functions of pid %d: %+v", name, pid, top)
	}
}
