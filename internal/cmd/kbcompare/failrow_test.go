//go:build linux

package main

import (
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/abreport"
	"github.com/kbench/kbench/internal/abstat"
	"github.com/kbench/kbench/internal/abstat/sim"
)

// The failure fixtures are real runs (2026-12-01, go1.26.8) of a
// throwaway benchmark written for them outside the repository: a
// BenchmarkTCPCRR whose flows=16 row calls b.Fatal after its first
// iteration when BREAK is set (the probe run of b.N=1 passes, go test
// prints the row's name, and the FAIL lands on that line), whose
// flows=4 row calls b.Fatal before any iteration (the FAIL on a line of
// its own), and whose flows=1 row passes:
//
//	go test -run='^$' -bench=. -count=5 -benchtime=1000x >fail-old.txt
//	BREAK=1 go test -run='^$' -bench=. -count=5 -benchtime=1000x >fail-new.txt
//	BREAK=1 go test -run='^$' -bench=. -count=5 -benchtime=1000x -v >fail-new-v.txt
const (
	failedAfterFirst  = "TCPCRR/flows=16/mm=separate-2"
	failedBeforeFirst = "TCPCRR/flows=4/mm=shared-2"
)

// TestFailedRowForms: a row is FAILED (exit 1, never 2) in both of go
// test's forms, with and without -v.
func TestFailedRowForms(t *testing.T) {
	old := sim.File(t, "fail-old.txt")
	for _, name := range []string{"fail-new.txt", "fail-new-v.txt"} {
		t.Run(name, func(t *testing.T) {
			nw := sim.File(t, name)
			r, err := abstat.Compare(old, nw, defaults)
			if err != nil {
				t.Fatal(err)
			}
			for _, row := range []string{failedAfterFirst, failedBeforeFirst} {
				if got := rowOf(t, r, "sec/op", row); got.Verdict != abstat.Failed || !strings.Contains(abreport.Why(got.Outcome), "--- FAIL in new") {
					t.Errorf("%s: verdict %s (%s), want FAILED in new", row, got.Verdict, abreport.Why(got.Outcome))
				}
			}
			if got := rowOf(t, r, "sec/op", "TCPCRR/flows=1/mm=separate-2"); got.Verdict == abstat.Failed {
				t.Errorf("the passing row is FAILED: %s", abreport.Why(got.Outcome))
			}
			out, code := compareRun(t, old, nw)
			if code != 1 {
				t.Errorf("exit %d, want 1:\n%s", code, out)
			}
			for _, s := range []string{"failed: failbench " + failedAfterFirst + " sec/op: --- FAIL in new",
				"failed: failbench " + failedBeforeFirst + " sec/op: --- FAIL in new"} {
				if !strings.Contains(out, s) {
					t.Errorf("output lacks %q:\n%s", s, out)
				}
			}
		})
	}
	// abstat.Failed on both sides: no row, but listed, and still exit 1.
	nw := sim.File(t, "fail-new.txt")
	out, code := compareRun(t, nw, nw)
	if code != 1 || !strings.Contains(out, "failed: old failbench BenchmarkTCPCRR/flows=16/mm=separate-2: --- FAIL, no results") {
		t.Errorf("both sides failed: exit %d, want 1 and the failure listed:\n%s", code, out)
	}
}
