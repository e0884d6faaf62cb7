//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/abplan"
)

// TestPlannedRun: kbab -target runs the design's pilot (abplan: 6 boots a
// side of the whole command, every boot at its -count), then pairs of
// boots of only the rows the design leaves pending, each with -bench
// built from them at the same count. Under -budget the rows whose boots
// do not fit get no verdict, named with their boots and mde, exit 0; the
// same command without the budget resumes and decides them; no verdict
// in this A/A (seeded boots of one distribution both sides).
func TestPlannedRun(t *testing.T) {
	f := newFake(t)
	f.knob("planned", 0)
	f.knob("seed", 36)
	pilot := 2 * abplan.DefaultPilot
	count := fmt.Sprintf("-test.count=%d", abplan.DefaultCount)
	args := f.args("-b-kernel", f.imgA, "-target", "5%", "-budget", "1ms")
	code, stdout, stderr := f.run(nil, args...)
	if code != 0 {
		t.Fatalf("budgeted A/A: exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	calls := f.calls()
	if len(calls) != pilot {
		t.Fatalf("budget of 1ms: %d boots, want the pilot's %d:\n%s", len(calls), pilot, strings.Join(calls, "\n"))
	}
	for i, c := range calls {
		if !strings.Contains(c, count+" ") && !strings.Contains(c, count+`"`) {
			t.Errorf("pilot boot %d: %s, want %s", i+1, c, count)
		}
	}
	for _, want := range []string{"Stein's two-stage t-test", "1 of 2 rows decided", "undecided: over budget: the rule asks "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("budgeted report lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stdout, "0 worse, 0 better, 0 changed") {
		t.Errorf("A/A report has a verdict:\n%s", stdout)
	}
	if !strings.Contains(stderr, "the plan from the pilot") {
		t.Errorf("stderr lacks the plan:\n%s", stderr)
	}
	plan, err := os.ReadFile(filepath.Join(f.out, "plan.txt"))
	if err != nil || !strings.Contains(string(plan), "Noisy-2") || !strings.Contains(string(plan), "over budget") {
		t.Fatalf("plan.txt: %v\n%s", err, plan)
	}

	// Resume without the budget: the pilot stays, pairs of Noisy follow;
	// a pair's second boot that failed runs its first's rows on the
	// next resume.
	f.knob("fail-at", pilot+2)
	code, _, failed := f.run(nil, f.args("-b-kernel", f.imgA, "-target", "5%")...)
	if code != exitBootFailed {
		t.Fatalf("second boot of the first pair failing: exit %d, want %d\n%s", code, exitBootFailed, failed)
	}
	os.Remove(filepath.Join(f.dir, "fail-at"))
	code, stdout, stderr = f.run(nil, f.args("-b-kernel", f.imgA, "-target", "5%")...)
	stderr = failed + stderr
	if code != 0 {
		t.Fatalf("resumed: exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	calls = f.calls()
	if len(calls) <= pilot || len(calls)%2 != 1 {
		t.Fatalf("resumed: %d boots in all, want pairs after the pilot's %d and a failed try", len(calls), pilot)
	}
	if c := calls[pilot : pilot+3]; c[1] != c[0] || c[2] != c[0] {
		t.Errorf("the first pair's boots, the second's failed try and its resumed one: %q, want one command", c)
	}
	calls = slices.Delete(calls, pilot+1, pilot+2)
	for i, c := range calls[pilot:] {
		if !strings.Contains(c, "-test.bench=^BenchmarkNoisy$") || strings.Contains(c, "BenchmarkWork") || !strings.Contains(c, count) {
			t.Errorf("boot %d after the pilot: %s, want -bench of Noisy alone (Work is decided by the pilot) at %s", i+pilot+1, c, count)
		}
	}
	for _, want := range []string{"rows 1 decided, 1 pending, 0 undecided", " left"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("progress lacks %q:\n%s", want, stderr)
		}
	}
	if !strings.Contains(stdout, "2 of 2 rows decided") || strings.Contains(stdout, "undecided:") {
		t.Errorf("finished report:\n%s", stdout)
	}
	if !strings.Contains(stdout, "0 worse, 0 better, 0 changed") {
		t.Errorf("A/A report has a verdict:\n%s", stdout)
	}
	if got := boots(t, filepath.Join(f.out, "A.txt")); got != len(calls)/2 {
		t.Errorf("A.txt holds %d boots, want %d", got, len(calls)/2)
	}
}

// TestPlannedChange: a planned A/B whose B is 50% slower ends worse, exit
// 1, by the design's test; the go test flags' -count=5 is every boot's.
func TestPlannedChange(t *testing.T) {
	f := newFake(t)
	f.knob("planned", 0)
	code, stdout, stderr := f.run(nil, append(f.args("-b-kernel", f.imgB, "-b-append", "slow", "-target", "5%"), "-count=5")...)
	if code != 1 {
		t.Fatalf("B 50%% slower: exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for i, c := range f.calls() {
		if !strings.Contains(c, "-test.count=5") || strings.Contains(c, "-test.count=10") {
			t.Errorf("boot %d: %s, want -test.count=5 alone", i+1, c)
		}
	}
	if !strings.Contains(stdout, "2 worse") || !strings.Contains(stdout, "2 of 2 rows decided") {
		t.Errorf("report:\n%s", stdout)
	}
}
