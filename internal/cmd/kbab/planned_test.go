//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPlannedRun: kbab -target runs a pilot of two boots a side at the
// pilot's two counts, then pairs of boots of only the rows the plan
// leaves pending, each with -bench built from them at the plan's count;
// -budget stops it with the rows it cut short named, and the same
// command without the budget resumes and finishes them.
func TestPlannedRun(t *testing.T) {
	f := newFake(t)
	f.knob("planned", 0)
	args := f.args("-b-kernel", f.imgA, "-target", "5%", "-budget", "1ms")
	code, stdout, stderr := f.run(nil, args...)
	if code != 0 {
		t.Fatalf("budgeted A/A: exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	calls := f.calls()
	if len(calls) != 4 {
		t.Fatalf("budget of 1ms: %d boots, want the pilot's 4:\n%s", len(calls), strings.Join(calls, "\n"))
	}
	for i, want := range []string{"-test.count=3", "-test.count=3", "-test.count=6", "-test.count=6"} {
		if !strings.Contains(calls[i], want+" ") && !strings.HasSuffix(calls[i], want+`"`) {
			t.Errorf("pilot boot %d: %s, want %s", i+1, calls[i], want)
		}
	}
	for _, want := range []string{"cut short by -budget 1ms", "fake Noisy-2: mde", "fake Work-2: mde", "at 2 of "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("budgeted report lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "the plan from the pilot") || !strings.Contains(stderr, "-budget 1ms: the next pair") {
		t.Errorf("stderr lacks the plan or the budget's stop:\n%s", stderr)
	}
	plan, err := os.ReadFile(filepath.Join(f.out, "plan.txt"))
	if err != nil || !strings.Contains(string(plan), "Noisy-2") {
		t.Fatalf("plan.txt: %v\n%s", err, plan)
	}

	// Resume without the budget: the pilot stays, pairs follow.
	code, stdout, stderr = f.run(nil, f.args("-b-kernel", f.imgA, "-target", "5%")...)
	if code != 0 {
		t.Fatalf("resumed: exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	calls = f.calls()
	if len(calls) <= 4 || len(calls)%2 != 0 {
		t.Fatalf("resumed: %d boots in all, want pairs after the pilot's 4", len(calls))
	}
	var noisyOnly int
	for i, c := range calls[4:] {
		if !strings.Contains(c, "-test.bench=") || strings.Contains(c, "-test.bench=.") {
			t.Errorf("boot %d after the pilot: %s, want -bench built from its rows", i+5, c)
		}
		if !strings.Contains(c, "BenchmarkWork") {
			noisyOnly++
		}
	}
	if noisyOnly == 0 {
		t.Errorf("every boot after the pilot ran Work, which needs 3 boots; want boots of Noisy alone:\n%s", strings.Join(calls, "\n"))
	}
	for _, want := range []string{"rows 1 decided, 1 pending", "decided,", "boots ", " left"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("progress lacks %q:\n%s", want, stderr)
		}
	}
	if !strings.Contains(stdout, "2 of 2 rows hold their planned boots") {
		t.Errorf("finished report:\n%s", stdout)
	}
	if got := boots(t, filepath.Join(f.out, "A.txt")); got != len(calls)/2 {
		t.Errorf("A.txt holds %d boots, want %d", got, len(calls)/2)
	}
}
