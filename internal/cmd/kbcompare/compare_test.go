//go:build linux

package main

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kbench/kbench/internal/abreport"
	"github.com/kbench/kbench/internal/abstat"
)

var defaults = abstat.Options{Threshold: 0.05, Alpha: 0.05}

func rowOf(t *testing.T, r *abstat.Report, unit, name string) *abstat.Row {
	t.Helper()
	if row := r.Find("", unit, name); row != nil {
		return row
	}
	t.Fatalf("no row %s in unit %s", name, unit)
	return nil
}

// TestVerdicts checks known samples against known verdicts, with each
// unit's direction: sec/op and B/op lower is better, loops/s is higher
// because its metadata says so, lat-ns better=lower, and "widgets" has
// no direction at all.
func TestVerdicts(t *testing.T) {
	units := []string{"Unit loops/s better=higher", "Unit lat-ns better=lower"}
	old := resultFile{units: units, lines: concat(
		// 10% slower in time and rate: worse in both units.
		samples("Slower-2", 10, "ns/op", around(100, 0.01), "loops/s", around(1e7, 0.01)),
		// 10% faster, 20% fewer bytes: better in both.
		samples("Faster-2", 10, "ns/op", around(100, 0.01), "B/op", around(1000, 0.01)),
		// abstat.Same distribution: ~.
		samples("abstat.Same-2", 10, "ns/op", around(100, 0.01)),
		// abstat.Same distribution, noisy: ~ (per sample, no mde says underpowered).
		samples("Noisy-2", 10, "ns/op", around(100, 0.2)),
		// A significant 2% change: below the 5% threshold, so ~.
		samples("Small-2", 10, "ns/op", around(100, 0.002)),
		// Latency up 50% (worse), widgets up 50% (changed: no direction).
		samples("Custom-2", 10, "lat-ns", around(10, 0.01), "widgets", around(4, 0.01)),
	)}
	nw := resultFile{units: units, lines: concat(
		samples("Slower-2", 10, "ns/op", around(110, 0.01), "loops/s", around(0.9e7, 0.01)),
		samples("Faster-2", 10, "ns/op", around(90, 0.01), "B/op", around(800, 0.01)),
		samples("abstat.Same-2", 10, "ns/op", around(100, 0.01)),
		samples("Noisy-2", 10, "ns/op", around(100, 0.2)),
		samples("Small-2", 10, "ns/op", around(102, 0.002)),
		samples("Custom-2", 10, "lat-ns", around(15, 0.01), "widgets", around(6, 0.01)),
	)}
	r, err := abstat.Compare(old.write(t, "old.txt"), nw.write(t, "new.txt"), defaults)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		unit, name string
		verdict    abstat.Verdict
		change     float64
	}{
		{"sec/op", "Slower-2", abstat.Worse, 0.10},
		{"loops/s", "Slower-2", abstat.Worse, -0.10},
		{"sec/op", "Faster-2", abstat.Better, -0.10},
		{"B/op", "Faster-2", abstat.Better, -0.20},
		{"sec/op", "abstat.Same-2", abstat.Same, 0},
		{"sec/op", "Noisy-2", abstat.Same, 0},
		{"sec/op", "Small-2", abstat.Same, 0.02},
		{"lat-sec", "Custom-2", abstat.Worse, 0.50}, // lat-ns, tidied by benchfmt
		{"widgets", "Custom-2", abstat.Changed, 0.50},
	}
	for _, w := range want {
		row := rowOf(t, r, w.unit, w.name)
		if row.Verdict != w.verdict || !near(row.Change, w.change) {
			t.Errorf("%s %s: verdict %q, change %+.4f; want %q, %+.4f (p=%.4f)",
				w.name, w.unit, row.Verdict, row.Change, w.verdict, w.change, row.P)
		}
		if row.Sides[0].N != 10 || row.Sides[1].N != 10 {
			t.Errorf("%s %s: n=%d+%d, want 10+10", w.name, w.unit, row.Sides[0].N, row.Sides[1].N)
		}
	}
	if row := rowOf(t, r, "sec/op", "Small-2"); row.P > 0.05 {
		t.Errorf("Small-2: p=%.4f; the test wants a significant change below the threshold", row.P)
	}
	if row := rowOf(t, r, "sec/op", "Slower-2"); !near(row.Sides[0].Center, 100e-9) || !near(row.Sides[1].Center, 110e-9) {
		t.Errorf("Slower-2 medians %g, %g; want 100ns, 110ns (ns/op tidied to sec/op)", row.Sides[0].Center, row.Sides[1].Center)
	}
	// Rows count once, in their primary unit: Slower-2 (sec/op; its
	// loops/s, moving with it, is evidence) and Custom-2 (lat-ns, its
	// first unit, as it has no sec/op).
	if n := r.Count(abstat.Worse); n != 2 {
		t.Errorf("%d rows worse, want 2", n)
	}

	// With no threshold, the significant 2% is worse too.
	r, err = abstat.Compare(old.write(t, "old.txt"), nw.write(t, "new.txt"), abstat.Options{Alpha: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	if row := rowOf(t, r, "sec/op", "Small-2"); row.Verdict != abstat.Worse {
		t.Errorf("Small-2 with threshold 0: verdict %q, want worse", row.Verdict)
	}
}

func near(a, b float64) bool {
	d := a - b
	if d < 0 {
		d = -d
	}
	return d <= 1e-9*max(1, abs(a), abs(b)) || (b != 0 && d/abs(b) < 1e-6) || (b == 0 && d < 1e-12)
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

func concat(ls ...[]string) []string {
	var out []string
	for _, l := range ls {
		out = append(out, l...)
	}
	return out
}

// TestOneSided checks benchmarks and units present in one file only: a
// benchmark that vanished, one that is new, and a unit the new run no
// longer reports.
func TestOneSided(t *testing.T) {
	old := resultFile{units: []string{"Unit loops/s better=higher"}, lines: concat(
		samples("Both-2", 6, "ns/op", around(100, 0.01), "loops/s", around(1e7, 0.01)),
		samples("Gone-2", 6, "ns/op", around(100, 0.01)),
	)}
	nw := resultFile{units: []string{"Unit loops/s better=higher"}, lines: concat(
		samples("Both-2", 6, "ns/op", around(100, 0.01)),
		samples("Both-4", 6, "ns/op", around(100, 0.01)), // another GOMAXPROCS: another row
		samples("Fresh-2", 6, "ns/op", around(100, 0.01)),
	)}
	r, err := abstat.Compare(old.write(t, "old.txt"), nw.write(t, "new.txt"), defaults)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []struct {
		unit, name string
		v          abstat.Verdict
	}{
		{"sec/op", "Both-2", abstat.Same},
		{"loops/s", "Both-2", abstat.OldOnly},
		{"sec/op", "Gone-2", abstat.OldOnly},
		{"sec/op", "Both-4", abstat.NewOnly},
		{"sec/op", "Fresh-2", abstat.NewOnly},
	} {
		if row := rowOf(t, r, w.unit, w.name); row.Verdict != w.v {
			t.Errorf("%s %s: verdict %q, want %q", w.name, w.unit, row.Verdict, w.v)
		}
	}
	var out bytes.Buffer
	if err := abreport.WriteText(&out, abreport.New(r, nil, nil)); err != nil {
		t.Fatal(err)
	}
	// Short names share a line with their numbers.
	lines := map[string]string{}
	for _, l := range strings.Split(out.String(), "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			lines[f[0]] = strings.Join(f, " ")
		}
	}
	for name, want := range map[string]string{
		"Gone-2":  "Gone-2 99.88n ± 1% - - - - 6 old only",
		"Fresh-2": "Fresh-2 - 99.88n ± 1% - - - 6 new only",
	} {
		if lines[name] != want {
			t.Errorf("text row %q, want %q:\n%s", lines[name], want, out.String())
		}
	}
}

// TestSetupHeader checks that the header lists the fingerprint and
// configuration lines that differ, side by side, counts the equal ones,
// and keeps every line within 100 columns even for a long cmdline.
func TestSetupHeader(t *testing.T) {
	long := strings.Repeat("console=ttyS0 mitigations=auto ", 12)
	old := resultFile{
		fingerprint: map[string]string{"kernel.release": "6.17.0", "kernel.cmdline": long, "cpu.microcode": "0x10", "go.version": "go1.26"},
		lines:       samples("Syscall/work=getpid/kind=cached/filters=0-2", 6, "ns/op", around(100, 0.01)),
	}
	nw := old
	nw.fingerprint = map[string]string{"kernel.release": "6.18.0", "kernel.cmdline": long + "nosmt", "cpu.microcode": "0x10", "inject.seccomp": "32 filters"}
	r, err := abstat.Compare(old.write(t, "old.txt"), nw.write(t, "new.txt"), defaults)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]string{
		"kernel.release": {"6.17.0", "6.18.0"},
		"kernel.cmdline": {long[:len(long)-1], long + "nosmt"},
		"go.version":     {"go1.26", ""},
		"inject.seccomp": {"", "32 filters"},
	}
	if len(r.Setup) != len(want) {
		t.Errorf("setup differences %+v, want %d", r.Setup, len(want))
	}
	for _, d := range r.Setup {
		w, ok := want[d.Key]
		if !ok || strings.TrimSpace(d.Old) != w[0] || d.New != w[1] {
			t.Errorf("setup %q: %q vs %q, want %q", d.Key, d.Old, d.New, w)
		}
	}
	// cpu.microcode and the goos, goarch, cpu lines are equal.
	if r.SetupEqual != 4 {
		t.Errorf("%d setup lines equal, want 4", r.SetupEqual)
	}
	var out bytes.Buffer
	if err := abreport.WriteText(&out, abreport.New(r, nil, nil)); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(out.String(), "\n") {
		if n := utf8.RuneCountInString(line); n > abreport.Width {
			t.Errorf("line of %d columns (max %d): %q", n, abreport.Width, line)
		}
	}
	for _, s := range []string{"6.17.0", "6.18.0", "nosmt", "(absent)", "4 lines differ, 4 equal"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("text output lacks %q:\n%s", s, out.String())
		}
	}
}

// TestDifferentCPU checks that a file configuration line that differs
// between the files but is constant within each (cpu:) is setup, not a
// reason to stop comparing as benchstat would.
func TestDifferentCPU(t *testing.T) {
	old := resultFile{lines: samples("X-2", 6, "ns/op", around(100, 0.01))}
	nw := old
	nw.extra = "cpu: Other CPU\n" + strings.Join(samples("Y-2", 6, "ns/op", around(100, 0.01)), "\n") + "\n"
	nw.lines = nil
	nw.extra = strings.Replace(nw.extra, "Y-2", "X-2", -1)
	r, err := abstat.Compare(old.write(t, "old.txt"), nw.write(t, "new.txt"), defaults)
	if err != nil {
		t.Fatal(err)
	}
	if row := rowOf(t, r, "sec/op", "X-2"); row.Verdict != abstat.Same || row.Test == "" {
		t.Errorf("X-2 not compared across CPUs: %+v", row)
	}
	if len(r.Setup) != 1 || r.Setup[0].Key != "cpu" || r.Setup[0].New != "Other CPU" {
		t.Errorf("setup differences %+v, want cpu only", r.Setup)
	}
}

// TestTooFewSamples checks that a large change measured with three
// samples per side is not called worse (the U-test cannot reach 0.05)
// and that the report says why.
func TestTooFewSamples(t *testing.T) {
	old := resultFile{lines: samples("Op-2", 3, "ns/op", around(100, 0.01))}
	nw := resultFile{lines: samples("Op-2", 3, "ns/op", around(500, 0.01))}
	var out, errOut bytes.Buffer
	if code := run([]string{old.write(t, "old.txt"), nw.write(t, "new.txt")}, &out, &errOut); code != 0 {
		t.Errorf("exit %d, want 0: three samples cannot be significant", code)
	}
	for _, s := range []string{"~ [1] [2]", "[1] need >= 6 samples for confidence interval", "1 row has too few samples"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("output lacks %q:\n%s", s, out.String())
		}
	}
}

// TestGeomean: one geomean line per package and unit (times and rates
// apart), over the rows both sides hold, with its change.
func TestGeomean(t *testing.T) {
	units := []string{"Unit loops/s better=higher"}
	old := resultFile{units: units, lines: concat(
		samples("A-2", 10, "ns/op", around(100, 0.01), "loops/s", around(1e7, 0.01)),
		samples("B-2", 10, "ns/op", around(400, 0.01), "loops/s", around(2.5e6, 0.01)),
		samples("Gone-2", 10, "ns/op", around(9000, 0.01)),
	)}
	nw := resultFile{units: units, lines: concat(
		samples("A-2", 10, "ns/op", around(110, 0.01), "loops/s", around(1e7/1.1, 0.01)),
		samples("B-2", 10, "ns/op", around(440, 0.01), "loops/s", around(2.5e6/1.1, 0.01)),
	)}
	r, err := abstat.Compare(old.write(t, "old.txt"), nw.write(t, "new.txt"), defaults)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]float64{"sec/op": {200e-9, 220e-9}, "loops/s": {5e6, 5e6 / 1.1}}
	for _, tab := range r.Tables {
		g, w := tab.Geomean, want[tab.Unit]
		if g == nil || g.Rows != 2 || !near(g.Old, w[0]) || !near(g.New, w[1]) || !near(g.Change, w[1]/w[0]-1) {
			t.Errorf("%s: geomean %+v, want %v over 2 rows", tab.Unit, g, w)
		}
		delete(want, tab.Unit)
	}
	if len(want) > 0 {
		t.Errorf("no tables for %v", want)
	}
	var out bytes.Buffer
	run([]string{old.write(t, "old.txt"), nw.write(t, "new.txt")}, &out, &out)
	for _, s := range []string{"geomean of 2 rows: 200.0n -> 220.0n, +10.00% (lower is better)",
		"geomean of 2 rows: 5.000M -> 4.545M, -9.09% (higher is better)"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("output lacks %q:\n%s", s, out.String())
		}
	}
}
