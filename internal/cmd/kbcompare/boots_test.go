//go:build linux

package main

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/abfile"
	"github.com/kbench/kbench/internal/abreport"
	"github.com/kbench/kbench/internal/abstat"
	"github.com/kbench/kbench/internal/abstat/sim"
)

func compareRun(t *testing.T, args ...string) (string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(args, &out, &errOut)
	if errOut.Len() > 0 {
		t.Errorf("stderr: %s", errOut.String())
	}
	return out.String(), code
}

// TestBootsRealChange: three boots of A against three boots of B, whose
// getpid pays for 32 seccomp filters: worse, with boots as the samples.
func TestBootsRealChange(t *testing.T) {
	old := sim.Assemble(t, "old.txt", sim.BootFiles("a", sim.BootsA, nil)...)
	nw := sim.Assemble(t, "new.txt", sim.BootFiles("b", sim.BootsB, nil)...)
	r, err := abstat.Compare(old, nw, defaults)
	if err != nil {
		t.Fatal(err)
	}
	if !r.BootMode || r.Boots != [2]int{3, 3} {
		t.Fatalf("boots %v, boot mode %v; want 3+3, on", r.Boots, r.BootMode)
	}
	for _, unit := range []string{"sec/op", "loops/s"} {
		row := rowOf(t, r, unit, sim.SyscallRow)
		if row.Test != "welch" || row.Sides[0].Boots != 3 || row.Sides[1].Boots != 3 {
			t.Fatalf("%s: not compared with boots as samples: %+v", unit, row.Sides)
		}
		if row.Verdict != abstat.Worse || row.P > 0.05 {
			t.Errorf("%s: verdict %s, p=%.4f, change %+.1f%%; want worse", unit, row.Verdict, row.P, 100*row.Change)
		}
	}
	// sec/op and loops/s are reciprocal (up to the rate's own timing and
	// rounding): logs give them about one p.
	if p1, p2 := rowOf(t, r, "sec/op", sim.SyscallRow).P, rowOf(t, r, "loops/s", sim.SyscallRow).P; math.Abs(p1-p2) > 0.05*p1 {
		t.Errorf("p %g for sec/op, %g for loops/s; want equal", p1, p2)
	}
	out, code := compareRun(t, old, nw)
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	for _, s := range []string{"boots: old 3 boots, new 3 boots. Boots are the samples", "Welch's t-test",
		"n counts boots", "within  between", "3+3", "worse: seccompbench " + sim.SyscallRow + " sec/op"} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
	checkWidth(t, out)
}

// TestBootsLayoutNotFlagged: the same kernel on both sides (A and A'
// runs), each boot shifted by its own layout factor. Per-sample
// statistics call the 7% between the sides' boots a change; with boots
// as samples it is within the boot-to-boot spread.
func TestBootsLayoutNotFlagged(t *testing.T) {
	oldScales := []float64{1.00, 1.08, 1.16}
	newScales := []float64{0.93, 1.01, 1.09}
	old := sim.Assemble(t, "old.txt", sim.BootFiles("a", sim.BootsA, oldScales)...)
	nw := sim.Assemble(t, "new.txt", sim.BootFiles("a2", sim.BootsB, newScales)...)
	r, err := abstat.Compare(old, nw, defaults)
	if err != nil {
		t.Fatal(err)
	}
	for _, unit := range []string{"sec/op", "loops/s"} {
		row := rowOf(t, r, unit, sim.SyscallRow)
		if row.Test != "welch" {
			t.Fatalf("%s: not compared with boots as samples", unit)
		}
		// Not a change, and, with boots 8% apart, no evidence of none.
		if row.Verdict != abstat.Underpowered {
			t.Errorf("%s: verdict %s (p=%.3f, change %+.1f%%, mde %+.1f%%), want underpowered",
				unit, row.Verdict, row.P, 100*row.Change, 100*row.Power.MDE)
		}
		if row.Between <= row.Within/math.Sqrt(5) {
			t.Errorf("%s: between-boot spread %.3f not above what within-boot noise %.3f explains", unit, row.Between, row.Within)
		}
	}
	if _, code := compareRun(t, old, nw); code != 0 {
		t.Errorf("exit %d, want 0", code)
	}

	// The same samples with one boot id per side: per-sample statistics
	// (what kbcompare did before, and benchstat does) are fooled.
	old1 := sim.Assemble(t, "old1.txt", sim.BootFiles("a", sim.OneA, oldScales)...)
	new1 := sim.Assemble(t, "new1.txt", sim.BootFiles("a2", sim.OneB, newScales)...)
	r1, err := abstat.Compare(old1, new1, defaults)
	if err != nil {
		t.Fatal(err)
	}
	if r1.BootMode {
		t.Fatal("one boot a side in boot mode")
	}
	row := rowOf(t, r1, "sec/op", sim.SyscallRow)
	if row.Verdict != abstat.Better || row.Sides[0].N != 15 {
		t.Errorf("per sample: verdict %s, p=%.4f, n=%d, change %+.1f%%; want better with 15 samples (the test's premise)",
			row.Verdict, row.P, row.Sides[0].N, 100*row.Change)
	}
}

// TestOneBootWarned: one boot a side keeps per-sample statistics and says
// that boot-to-boot variation is unmeasured.
func TestOneBootWarned(t *testing.T) {
	old := sim.Assemble(t, "old.txt", sim.BootFiles("a", sim.OneA, nil)...)
	nw := sim.Assemble(t, "new.txt", sim.BootFiles("b", sim.OneB, nil)...)
	out, code := compareRun(t, old, nw)
	if code != 1 {
		t.Errorf("exit %d, want 1 (B is worse)", code)
	}
	for _, s := range []string{"boots: old 1 boot, new 1 boot. Boot-to-boot variation is unmeasured",
		"can be layout, not the kernel", "(Mann-Whitney U)", "  15  "} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
	// Two boots a side are still too few.
	old2 := sim.Assemble(t, "old2.txt", sim.BootFiles("a", []string{sim.BootsA[0], sim.BootsA[1], sim.BootsA[1]}, nil)...)
	out, _ = compareRun(t, old2, nw)
	if !strings.Contains(out, "boots: old 2 boots, new 1 boot. Boot-to-boot variation is unmeasured") {
		t.Errorf("2+1 boots not warned:\n%s", out)
	}
	new2 := sim.Assemble(t, "new2.txt", sim.BootFiles("b", []string{sim.BootsB[0], sim.BootsB[1], sim.BootsB[1]}, nil)...)
	out, _ = compareRun(t, old2, new2)
	if !strings.Contains(out, "boots: old 2 boots, new 2 boots: too few to use boots as samples") {
		t.Errorf("2+2 boots not warned:\n%s", out)
	}
}
func TestFailedRow(t *testing.T) {
	old := sim.Assemble(t, "old.txt", sim.BootFiles("a", sim.BootsA, nil)...)
	// B is A' here (no injected filters): nothing is worse.
	rs := sim.BootFiles("a2", sim.BootsB, nil)
	rs[1].Edit = DropRows(sim.BootsB[1], FailBlock)
	nw := sim.Assemble(t, "new.txt", rs...)
	r, err := abstat.Compare(old, nw, defaults)
	if err != nil {
		t.Fatal(err)
	}
	if row := rowOf(t, r, "sec/op", sim.SyscallRow); row.Verdict != abstat.Failed || !strings.Contains(abreport.Why(row.Outcome), "--- FAIL in new") {
		t.Errorf("verdict %s (%s), want FAILED", row.Verdict, abreport.Why(row.Outcome))
	}
	out, code := compareRun(t, old, nw)
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	for _, s := range []string{"FAILED", "failed: seccompbench " + sim.SyscallRow + " sec/op: --- FAIL in new", "0 worse"} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}

	// Every boot of B skipped the row (go test -v prints the skips).
	skipped := "--- SKIP: BenchmarkSyscall/work=getpid/kind=cached/filters=0\n    syscall_test.go:40: no seccomp\nPASS\n"
	rs = sim.BootFiles("a2", sim.BootsB, nil)
	for i := range rs {
		rs[i].Edit = DropRows(sim.BootsB[i], skipped)
	}
	nw = sim.Assemble(t, "new.txt", rs...)
	out, code = compareRun(t, old, nw)
	if code != 1 {
		t.Errorf("skipped row: exit %d, want 1", code)
	}
	if !strings.Contains(out, "skipped: seccompbench "+sim.SyscallRow+" sec/op: skipped in new") || !strings.Contains(out, ": syscall_test.go:40: no seccomp") {
		t.Errorf("skipped row not listed with its reason:\n%s", out)
	}
}

// TestPulseWarning: a boot whose fingerprint records protect pulses
// earlier in the boot is named in the header.
func TestPulseWarning(t *testing.T) {
	rs := sim.BootFiles("a", sim.BootsA, nil)
	rs[2].Edit = func(s string) string {
		return strings.Replace(s, abfile.BootIDLine+sim.BootsA[2]+"\n",
			abfile.BootIDLine+sim.BootsA[2]+"\n# kbench pulse.earlier: protect at 2026-11-30T10:00:00Z by prctlbench.test (1 process)\n", 1)
	}
	old := sim.Assemble(t, "old.txt", rs...)
	nw := sim.Assemble(t, "new.txt", sim.BootFiles("a2", sim.BootsB, nil)...)
	out, _ := compareRun(t, old, nw)
	if !strings.Contains(out, "warning: old, boot aaaaaaaa: protect pulses ran earlier in this boot: protect at") {
		t.Errorf("no pulse warning:\n%s", out)
	}
}

func checkWidth(t *testing.T, out string) {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if n := len([]rune(l)); n > abreport.Width {
			t.Errorf("line of %d columns: %q", n, l)
		}
	}
}
func TestBootsOneSampleEach(t *testing.T) {
	ra, rb := sim.BootFiles("a", sim.BootsA, nil), sim.BootFiles("b", sim.BootsB, nil)
	ra[0].Edit, rb[0].Edit = FirstSampleOnly, FirstSampleOnly
	old, nw := sim.Assemble(t, "old.txt", ra...), sim.Assemble(t, "new.txt", rb...)
	out, code := compareRun(t, old, nw)
	if code != 1 {
		t.Errorf("exit %d, want 1 (worse)", code)
	}
	if strings.Contains(out, "too few samples") || strings.Contains(out, "need >= 6") {
		t.Errorf("per-sample warnings in boot mode:\n%s", out)
	}
	if !strings.Contains(out, "3+3       -") {
		t.Errorf("within-boot spread not shown as unknown:\n%s", out)
	}
}
