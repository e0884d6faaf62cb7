//go:build linux

package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The boot fixtures are real result files: testdata/syscall-*-run*.txt
// are the unedited outputs of nine runs of the compiled seccompbench test
// binary on one 2-core VM in one boot (2026-11-30), interleaved A, A', B:
//
//	seccompbench.test -test.run='^$' \
//	    -test.bench='^BenchmarkSyscall$/^work=getpid$/^kind=cached$/^filters=0$' \
//	    -test.benchtime=50ms -test.count=5
//
// with B under `seccompexec -filters=32` (32 argument-reading seccomp
// filters on every getpid). All nine ran in one boot; the tests below
// give each run its own boot id (editing the kernel.boot_id line) so that
// three runs stand for three boots of a kernel, and where a test needs a
// layout shift between boots it scales that run's samples by a factor,
// as a boot whose layout is slower or faster would.

// bootRun is one real run standing for one boot.
type bootRun struct {
	file  string  // testdata file
	boot  string  // the boot id written into its kernel.boot_id line
	scale float64 // multiplies sec/op samples (and divides loops/s); 0 is 1
	edit  func(string) string
}

// assemble concatenates runs into one result file, as `tee -a` across
// boots would, with each run's boot id (and samples) edited.
func assemble(t *testing.T, name string, runs ...bootRun) string {
	t.Helper()
	var b strings.Builder
	for _, r := range runs {
		data, err := os.ReadFile(filepath.Join("testdata", r.file))
		if err != nil {
			t.Fatal(err)
		}
		var n int
		for _, l := range strings.SplitAfter(string(data), "\n") {
			if strings.HasPrefix(l, bootKey) {
				l = bootKey + r.boot + "\n"
				n++
			}
			if r.scale != 0 && strings.HasPrefix(l, "Benchmark") {
				l = scaleLine(t, l, r.scale)
			}
			b.WriteString(l)
		}
		if n != 1 {
			t.Fatalf("%s: %d kernel.boot_id lines, want 1", r.file, n)
		}
	}
	out := b.String()
	for _, r := range runs {
		if r.edit != nil {
			out = r.edit(out)
		}
	}
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// scaleLine multiplies a result line's ns/op by f and divides its loops/s.
func scaleLine(t *testing.T, l string, f float64) string {
	t.Helper()
	fields := strings.Fields(l)
	for i := 2; i+1 < len(fields); i += 2 {
		v, err := strconv.ParseFloat(fields[i], 64)
		if err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		switch fields[i+1] {
		case "ns/op":
			v *= f
		case "loops/s":
			v /= f
		default:
			t.Fatalf("%q: unit %s", l, fields[i+1])
		}
		fields[i] = strconv.FormatFloat(v, 'g', 6, 64)
	}
	return strings.Join(fields, "\t") + "\n"
}

func runs(prefix string, boots []string, scales []float64) []bootRun {
	var rs []bootRun
	for i, b := range boots {
		r := bootRun{file: fmt.Sprintf("syscall-%s-run%d.txt", prefix, i+1), boot: b}
		if scales != nil {
			r.scale = scales[i]
		}
		rs = append(rs, r)
	}
	return rs
}

var (
	bootsA = []string{"aaaaaaaa-0000-4000-8000-000000000001", "aaaaaaaa-0000-4000-8000-000000000002", "aaaaaaaa-0000-4000-8000-000000000003"}
	bootsB = []string{"bbbbbbbb-0000-4000-8000-000000000001", "bbbbbbbb-0000-4000-8000-000000000002", "bbbbbbbb-0000-4000-8000-000000000003"}
	oneA   = []string{bootsA[0], bootsA[0], bootsA[0]}
	oneB   = []string{bootsB[0], bootsB[0], bootsB[0]}
)

const syscallRow = "Syscall/work=getpid/kind=cached/filters=0-2"

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
	old := assemble(t, "old.txt", runs("a", bootsA, nil)...)
	nw := assemble(t, "new.txt", runs("b", bootsB, nil)...)
	r, err := Compare(old, nw, defaults)
	if err != nil {
		t.Fatal(err)
	}
	if !r.BootMode || r.Boots != [2]int{3, 3} {
		t.Fatalf("boots %v, boot mode %v; want 3+3, on", r.Boots, r.BootMode)
	}
	for _, unit := range []string{"sec/op", "loops/s"} {
		row := rowOf(t, r, unit, syscallRow)
		if row.Boot == nil || row.Boot.N1 != 3 || row.Boot.N2 != 3 {
			t.Fatalf("%s: not compared with boots as samples: %+v", unit, row.Boot)
		}
		if row.Verdict != Worse || row.Boot.P > 0.05 {
			t.Errorf("%s: verdict %s, p=%.4f, change %+.1f%%; want worse", unit, row.Verdict, row.Boot.P, 100*row.Change)
		}
	}
	// sec/op and loops/s are reciprocal (up to the rate's own timing and
	// rounding): logs give them about one p.
	if p1, p2 := rowOf(t, r, "sec/op", syscallRow).Boot.P, rowOf(t, r, "loops/s", syscallRow).Boot.P; math.Abs(p1-p2) > 0.05*p1 {
		t.Errorf("p %g for sec/op, %g for loops/s; want equal", p1, p2)
	}
	out, code := compareRun(t, old, nw)
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	for _, s := range []string{"boots: old 3 boots, new 3 boots. Boots are the samples", "Welch's t-test",
		"n counts boots", "within  between", "3+3", "worse: seccompbench " + syscallRow + " sec/op"} {
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
	old := assemble(t, "old.txt", runs("a", bootsA, oldScales)...)
	nw := assemble(t, "new.txt", runs("a2", bootsB, newScales)...)
	r, err := Compare(old, nw, defaults)
	if err != nil {
		t.Fatal(err)
	}
	for _, unit := range []string{"sec/op", "loops/s"} {
		row := rowOf(t, r, unit, syscallRow)
		if row.Boot == nil {
			t.Fatalf("%s: not compared with boots as samples", unit)
		}
		// Not a change, and, with boots 8% apart, no evidence of none.
		if row.Verdict != Underpowered {
			t.Errorf("%s: verdict %s (p=%.3f, change %+.1f%%, mde %+.1f%%), want underpowered",
				unit, row.Verdict, row.Boot.P, 100*row.Change, 100*row.Power.MDE)
		}
		if row.Boot.Between <= row.Boot.Within/math.Sqrt(5) {
			t.Errorf("%s: between-boot spread %.3f not above what within-boot noise %.3f explains", unit, row.Boot.Between, row.Boot.Within)
		}
	}
	if _, code := compareRun(t, old, nw); code != 0 {
		t.Errorf("exit %d, want 0", code)
	}

	// The same samples with one boot id per side: per-sample statistics
	// (what kbcompare did before, and benchstat does) are fooled.
	old1 := assemble(t, "old1.txt", runs("a", oneA, oldScales)...)
	new1 := assemble(t, "new1.txt", runs("a2", oneB, newScales)...)
	r1, err := Compare(old1, new1, defaults)
	if err != nil {
		t.Fatal(err)
	}
	if r1.BootMode {
		t.Fatal("one boot a side in boot mode")
	}
	row := rowOf(t, r1, "sec/op", syscallRow)
	if row.Verdict != Better || row.Cmp.N1 != 15 {
		t.Errorf("per sample: verdict %s, p=%.4f, n=%d, change %+.1f%%; want better with 15 samples (the test's premise)",
			row.Verdict, row.Cmp.P, row.Cmp.N1, 100*row.Change)
	}
}

// TestOneBootWarned: one boot a side keeps per-sample statistics and says
// that boot-to-boot variation is unmeasured.
func TestOneBootWarned(t *testing.T) {
	old := assemble(t, "old.txt", runs("a", oneA, nil)...)
	nw := assemble(t, "new.txt", runs("b", oneB, nil)...)
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
	old2 := assemble(t, "old2.txt", runs("a", []string{bootsA[0], bootsA[1], bootsA[1]}, nil)...)
	out, _ = compareRun(t, old2, nw)
	if !strings.Contains(out, "boots: old 2 boots, new 1 boot. Boot-to-boot variation is unmeasured") {
		t.Errorf("2+1 boots not warned:\n%s", out)
	}
	new2 := assemble(t, "new2.txt", runs("b", []string{bootsB[0], bootsB[1], bootsB[1]}, nil)...)
	out, _ = compareRun(t, old2, new2)
	if !strings.Contains(out, "boots: old 2 boots, new 2 boots: too few to use boots as samples") {
		t.Errorf("2+2 boots not warned:\n%s", out)
	}
}

// failBlock is a b.Fatal in the row, in the form go1.26's go test prints
// it for a real failing sub-benchmark (the parent fails with it, and the
// run stops with FAIL instead of PASS); the message is made up.
const failBlock = "--- FAIL: BenchmarkSyscall/work=getpid/kind=cached/filters=0\n" +
	"    syscall_test.go:60: getppid returned 1, errno 0; filter 0 of 0 should have denied it\n" +
	"--- FAIL: BenchmarkSyscall\nFAIL\n"

// dropRows removes the result lines of the run of boot boot from the
// assembled file and puts in its PASS line's place what go test prints
// instead (ending in PASS for skips, FAIL for failures).
func dropRows(boot, instead string) func(string) string {
	return func(s string) string {
		start := strings.Index(s, bootKey+boot+"\n")
		if start < 0 {
			panic("no boot " + boot)
		}
		end := len(s)
		if i := strings.Index(s[start+1:], bootKey); i >= 0 {
			end = start + 1 + i
		}
		var kept []string
		for _, l := range strings.SplitAfter(s[start:end], "\n") {
			switch {
			case strings.HasPrefix(l, "BenchmarkSyscall/"):
			case l == "PASS\n":
				kept = append(kept, instead)
			default:
				kept = append(kept, l)
			}
		}
		return s[:start] + strings.Join(kept, "") + s[end:]
	}
}

// TestFailedRow: a row that failed in one boot of B is FAILED, whatever
// its other boots say, and the exit status is 1 even with nothing worse;
// a row one side lacks because it skipped it there is listed too.
func TestFailedRow(t *testing.T) {
	old := assemble(t, "old.txt", runs("a", bootsA, nil)...)
	// B is A' here (no injected filters): nothing is worse.
	rs := runs("a2", bootsB, nil)
	rs[1].edit = dropRows(bootsB[1], failBlock)
	nw := assemble(t, "new.txt", rs...)
	r, err := Compare(old, nw, defaults)
	if err != nil {
		t.Fatal(err)
	}
	if row := rowOf(t, r, "sec/op", syscallRow); row.Verdict != Failed || !strings.Contains(row.Why, "--- FAIL in new") {
		t.Errorf("verdict %s (%s), want FAILED", row.Verdict, row.Why)
	}
	out, code := compareRun(t, old, nw)
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	for _, s := range []string{"FAILED", "failed: seccompbench " + syscallRow + " sec/op: --- FAIL in new", "0 worse"} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}

	// Every boot of B skipped the row (go test -v prints the skips).
	skipped := "--- SKIP: BenchmarkSyscall/work=getpid/kind=cached/filters=0\n    syscall_test.go:40: no seccomp\nPASS\n"
	rs = runs("a2", bootsB, nil)
	for i := range rs {
		rs[i].edit = dropRows(bootsB[i], skipped)
	}
	nw = assemble(t, "new.txt", rs...)
	out, code = compareRun(t, old, nw)
	if code != 1 {
		t.Errorf("skipped row: exit %d, want 1", code)
	}
	if !strings.Contains(out, "skipped: seccompbench "+syscallRow+" sec/op: --- SKIP in new") {
		t.Errorf("skipped row not listed:\n%s", out)
	}
}

// TestPulseWarning: a boot whose fingerprint records protect pulses
// earlier in the boot is named in the header.
func TestPulseWarning(t *testing.T) {
	rs := runs("a", bootsA, nil)
	rs[2].edit = func(s string) string {
		return strings.Replace(s, bootKey+bootsA[2]+"\n",
			bootKey+bootsA[2]+"\n# kbench pulse.earlier: protect at 2026-11-30T10:00:00Z by prctlbench.test (1 process)\n", 1)
	}
	old := assemble(t, "old.txt", rs...)
	nw := assemble(t, "new.txt", runs("a2", bootsB, nil)...)
	out, _ := compareRun(t, old, nw)
	if !strings.Contains(out, "warning: old, boot aaaaaaaa: protect pulses ran earlier in this boot: protect at") {
		t.Errorf("no pulse warning:\n%s", out)
	}
}

func checkWidth(t *testing.T, out string) {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if n := len([]rune(l)); n > width {
			t.Errorf("line of %d columns: %q", n, l)
		}
	}
}

// TestWelch checks the library's t-test against Student's t table (an
// independent check of its p-values: samples built to give a known t and
// df) and a textbook example.
func TestWelch(t *testing.T) {
	// Two samples of n with standard deviation 1 whose means are d apart
	// give t = d/sqrt(2/n) with df = 2n-2.
	for _, c := range []struct {
		n     int
		tt, p float64
	}{
		{2, 4.302653, 0.05},  // df 2
		{3, 2.776445, 0.05},  // df 4
		{6, 2.228139, 0.05},  // df 10
		{2, 9.924843, 0.01},  // df 2
		{3, 4.604095, 0.01},  // df 4
		{11, 2.085963, 0.05}, // df 20
		{3, 0, 1},
	} {
		d := c.tt * math.Sqrt(2/float64(c.n))
		var a, b []float64
		for i := range c.n {
			// n values of mean 0 and sample SD 1.
			x := float64(2*i-(c.n-1)) * math.Sqrt(12/float64(c.n*(c.n+1))) / 2
			a, b = append(a, x), append(b, x+d)
		}
		tt, df, p := welch(a, b)
		if math.Abs(tt-c.tt) > 1e-6 || math.Abs(df-float64(2*c.n-2)) > 1e-9 || math.Abs(p-c.p) > 1e-5 {
			t.Errorf("n=%d: t=%.6f df=%g p=%.6f, want t=%.6f df=%d p=%.6f", c.n, tt, df, p, c.tt, 2*c.n-2, c.p)
		}
	}
	// Three boots a side can reach 0.05, which no rank test of 3+3 can:
	// t = 6/sqrt(2/3) = 7.348469 on 4 df, p = 0.0018 (the table's 0.01
	// critical value on 4 df is 4.604).
	a := []float64{100, 101, 99}
	b := []float64{106, 107, 105}
	tt, df, p := welch(a, b)
	if math.Abs(tt-7.348469) > 1e-5 || math.Abs(df-4) > 1e-9 || p > 0.01 || p < 0.001 {
		t.Errorf("t=%g df=%g p=%g; want t=7.348, df=4, 0.001<p<0.01", tt, df, p)
	}
	// No spread: the means decide.
	if _, _, p := welch([]float64{1, 1, 1}, []float64{2, 2, 2}); p != 0 {
		t.Errorf("no spread, apart: p=%g, want 0", p)
	}
	if _, _, p := welch([]float64{1, 1, 1}, []float64{1, 1, 1}); p != 1 {
		t.Errorf("no spread, equal: p=%g, want 1", p)
	}
}

// firstSampleOnly keeps each run's first result line: -count=1 per boot.
func firstSampleOnly(s string) string {
	var b strings.Builder
	seen := false
	for _, l := range strings.SplitAfter(s, "\n") {
		if strings.HasPrefix(l, bootKey) {
			seen = false
		}
		if strings.HasPrefix(l, "Benchmark") {
			if seen {
				continue
			}
			seen = true
		}
		b.WriteString(l)
	}
	return b.String()
}

// TestBootsOneSampleEach: with -count=1 on each of 3 boots a side, the
// boots still decide (no "too few samples" for per-sample ranges), and
// the within-boot spread is unknown, not zero.
func TestBootsOneSampleEach(t *testing.T) {
	ra, rb := runs("a", bootsA, nil), runs("b", bootsB, nil)
	ra[0].edit, rb[0].edit = firstSampleOnly, firstSampleOnly
	old, nw := assemble(t, "old.txt", ra...), assemble(t, "new.txt", rb...)
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
