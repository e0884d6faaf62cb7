//go:build linux

package main

import (
	"context"
	"fmt"
	"io"
	"math"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/abplan"
	"github.com/kbench/kbench/internal/abstat"
	"github.com/kbench/kbench/internal/testflags"
)

// TestDuetRefusesTooFewCPUs: two guests of -smp N on a host where kbab
// may use fewer than 2N CPUs: refused before any boot, naming what fits.
func TestDuetRefusesTooFewCPUs(t *testing.T) {
	f := newFake(t)
	cpus, err := duetCPUs("1")
	if err != nil {
		t.Skip(err)
	}
	smp := len(cpus[0]) + 1
	code, _, stderr := f.run(nil, f.args("-b-kernel", f.imgA, "-duet", "-smp", strconv.Itoa(smp))...)
	if code != exitUsage || !strings.Contains(stderr, fmt.Sprintf("-duet: two guests of -smp %d need %d host CPUs", smp, 2*smp)) ||
		!strings.Contains(stderr, fmt.Sprintf("-smp %d fits", smp-1)) {
		t.Errorf("exit %d, want %d naming the -smp that fits:\n%s", code, exitUsage, stderr)
	}
	if c := f.calls(); len(c) != 0 {
		t.Errorf("booted %d guests, want none", len(c))
	}
}

// TestDuetPairs: a fixed duet A/A of 3 pairs boots each pair's A and B
// at once (their go tests' windows overlap) and the next pair after
// both end (the barrier), A and B on disjoint halves of kbab's CPUs,
// swapped pair to pair; the report names the design, its test and the
// CPUs (its A/A verdicts are the simulations').
func TestDuetPairs(t *testing.T) {
	f := newFake(t)
	cpus, err := duetCPUs("1")
	if err != nil {
		t.Skip(err)
	}
	f.knob("planned", 0)
	f.knob("seed", 47)
	f.knob("sleep", 3)
	code, stdout, stderr := f.run(nil, f.args("-b-kernel", f.imgA, "-b-append", "same", "-duet", "-smp", "1", "-boots", "3")...)
	if code > 1 {
		t.Fatalf("duet A/A: exit %d, want 0 or 1\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	calls := f.calls()
	if len(calls) != 6 {
		t.Fatalf("%d guests, want 6:\n%s", len(calls), strings.Join(calls, "\n"))
	}
	// calls are in the order the guests started: two a pair.
	for j := range 3 {
		for _, c := range calls[2*j : 2*j+2] {
			side := 0
			if strings.Contains(c, `append="same"`) {
				side = 1
			}
			want := listOf(cpus[(j+side)%2])
			if !strings.HasSuffix(c, " cpus="+want) {
				t.Errorf("pair %d, %s: %s, want cpus=%s", j+1, []string{"A", "B"}[side], c, want)
			}
		}
	}
	stamps := f.stamps()
	for j := range 3 {
		a, b := stamps[2*j], stamps[2*j+1]
		if b[0] >= a[1] {
			t.Errorf("pair %d: the second guest began after the first ended: %v", j+1, stamps[2*j:2*j+2])
		}
		if j < 2 && stamps[2*j+2][0] < max(a[1], b[1]) {
			t.Errorf("pair %d began before pair %d ended: %v", j+2, j+1, stamps)
		}
	}
	for _, want := range []string{"design: duet, 3 pairs", abplan.PairedRule + ": 3 boots a side planned, 3 held",
		"on the first half of the CPUs kbab may use, the other on the second"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, stdout)
		}
	}
}

// TestDuetPlannedChange: -duet -target plans pairs by Stein's rule on
// their differences, and a B 50% slower ends worse, exit 1.
func TestDuetPlannedChange(t *testing.T) {
	f := newFake(t)
	if _, err := duetCPUs("1"); err != nil {
		t.Skip(err)
	}
	f.knob("planned", 0)
	code, stdout, stderr := f.run(nil, f.args("-b-kernel", f.imgA, "-b-append", "slow", "-duet", "-smp", "1", "-target", "5%")...)
	if code != 1 || !strings.Contains(stdout, "2 worse") || !strings.Contains(stdout, "Stein's rule on those pairs") {
		t.Errorf("B 50%% slower: exit %d, want 1 and 2 rows worse\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if n := len(f.calls()); n%2 != 0 || n < 12 {
		t.Errorf("%d guests: want the pilot's 6 pairs at least, in pairs", n)
	}
}

func listOf(c []int) string {
	var s []string
	for _, x := range c {
		s = append(s, strconv.Itoa(x))
	}
	if len(c) > 1 && c[len(c)-1]-c[0] == len(c)-1 {
		return fmt.Sprintf("%d-%d", c[0], c[len(c)-1])
	}
	return strings.Join(s, ",")
}

// stamps are the fake's [began, ended] of each guest, by beginning.
func (f *fake) stamps() [][2]float64 {
	b, _ := os.ReadFile(filepath.Join(f.dir, "stamps"))
	var s [][2]float64
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var x [2]float64
		fmt.Sscan(l, &x[0], &x[1])
		s = append(s, x)
	}
	sort.Slice(s, func(i, j int) bool { return s[i][0] < s[j][0] })
	return s
}

// duetModel is the simulations' stand-in for a pair's go tests: each
// row's samples are exp(moment + layout + within) times its level, the
// moment shared by the pair's two boots (the host at that time), the
// layout a boot's own, within a sample's; B's Noisy row is shift slower.
type duetModel struct {
	seed          uint64
	moment, shift float64
}

// duetRows are the model's rows: name, layout and within spreads.
type duetRow struct {
	name           string
	layout, within float64
}

var duetRows = []duetRow{{"Work", 0.002, 0.004}, {"Noisy", 0.03, 0.01}}

func (m *duetModel) goTest(_ context.Context, d *driver, bf *bootSide, args []string) (int, error) {
	name, s, out := bf.name, bf.k.Label, bf.out
	var boot, pair int
	fmt.Sscanf(name, "boot %d with", &boot)
	pair = (boot - 1) / 2
	side := uint64(strings.Count("AB", s) - strings.Count("A", s)) // 0 A, 1 B
	rng := mrand.New(mrand.NewPCG(m.seed, 2*uint64(pair)+side))
	moment := m.moment * mrand.New(mrand.NewPCG(m.seed, 1e6+uint64(pair))).NormFloat64()
	l := testflags.GoTest(args)
	c, _ := l.Lookup("count")
	count, _ := strconv.Atoi(c.Value)
	b, _ := l.Lookup("bench")
	bench := b.Value
	w := io.Writer(out)
	fmt.Fprintf(w, "# kbench kernel.boot_id: %d-%d-%s\ngoos: linux\ngoarch: amd64\npkg: fake\n", m.seed, pair, s)
	for _, r := range duetRows {
		if bench != "." && !strings.Contains(bench, r.name) {
			continue
		}
		level := math.Exp(moment + r.layout*rng.NormFloat64())
		if s == "B" && r.name == "Noisy" {
			level *= 1 + m.shift
		}
		for range count {
			fmt.Fprintf(w, "Benchmark%s-2\t1000\t%.2f ns/op\n", r.name, 1000*level*math.Exp(r.within*rng.NormFloat64()))
		}
	}
	fmt.Fprintf(w, "PASS\nok  \tfake\t%.3fs\n", 0.5+0.001*float64(count))
	return 0, nil
}

// simDuet runs kbab's duet, the driver's loop and design with the model
// in place of go test, once per seed, and returns each run's rows' p
// and verdicts (Work, Noisy).
func simDuet(t *testing.T, runs int, moment, shift float64, flags ...string) (ps [][2]float64, verdicts [][2]abstat.Verdict) {
	f := newFake(t)
	if _, err := duetCPUs("1"); err != nil {
		t.Skip(err)
	}
	m := &duetModel{moment: moment, shift: shift}
	old := goTest
	goTest = m.goTest
	t.Cleanup(func() { goTest = old })
	for seed := range runs {
		m.seed = uint64(seed)
		out := filepath.Join(t.TempDir(), "out")
		args := append([]string{"-out", out, "-vmexec", "true", "-a-kernel", f.imgA, "-b-kernel", f.imgA, "-b-append", "b", "-duet", "-smp", "1"}, flags...)
		cfg, err := parseFlags(append(args, "--", ".", "-run=^$", "-bench=."), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		d, err := prepare(cfg, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if code := d.runAll(io.Discard, nil); code > 1 {
			t.Fatalf("seed %d: exit %d", seed, code)
		}
		rep, err := abstat.Compare(d.result("A"), d.result("B"), d.compareOptions())
		d.close()
		if err != nil {
			t.Fatal(err)
		}
		var p [2]float64
		var v [2]abstat.Verdict
		for tb, row := range rep.Primaries() {
			i := slices.IndexFunc(duetRows, func(r duetRow) bool { return strings.HasPrefix(row.Name, r.name+"-") })
			if tb.Unit == "sec/op" && i >= 0 {
				p[i], v[i] = row.P, row.Verdict
			}
		}
		ps, verdicts = append(ps, p), append(verdicts, v)
	}
	return ps, verdicts
}

// simRuns is the simulations' runs: KBENCH_SIM_FULL=1 for the results
// file's.
func simRuns(short, full int) int {
	if os.Getenv("KBENCH_SIM_FULL") != "" {
		return full
	}
	return short
}

// TestDuetSimFixed: the fixed duet of 6 pairs, A/A, with a moment's
// noise (10%) three times a boot's own on the pairs: each row's paired p
// is at most 0.05 in 5% of runs (4 standard errors), and a run gives a
// false verdict in at most 5%.
func TestDuetSimFixed(t *testing.T) {
	runs := simRuns(60, 400)
	ps, vs := simDuet(t, runs, 0.1, 0, "-boots", "6")
	var hits, any int
	for i := range ps {
		for r := range 2 {
			if ps[i][r] <= 0.05 {
				hits++
			}
		}
		if slices.ContainsFunc(vs[i][:], called) {
			any++
		}
	}
	n := float64(2 * runs)
	if rate, se := float64(hits)/n, math.Sqrt(0.05*0.95/n); math.Abs(rate-0.05) > 4*se {
		t.Errorf("rows' p <= 0.05 in %.4f of %d A/A rows, want 0.05 ± %.4f", rate, int(n), 4*se)
	}
	if rate := float64(any) / float64(runs); rate > 0.05+4*math.Sqrt(0.05*0.95/float64(runs)) {
		t.Errorf("a false verdict in %.4f of %d A/A runs, want at most 0.05", rate, runs)
	}
	t.Logf("fixed duet A/A, %d runs: p <= 0.05 in %.4f of rows, a verdict in %.4f of runs", runs, float64(hits)/n, float64(any)/float64(runs))
}

// TestDuetSimPlanned: -duet -target 5% under the same moment's noise:
// in an A/A each row's p is at most its level (0.05 over the 2 rows) in
// that share of runs, and with Noisy 5% slower on B the run calls it
// worse in at least 80% (Stein's power), each within 4 standard errors.
func TestDuetSimPlanned(t *testing.T) {
	runs := simRuns(20, 150)
	ps, _ := simDuet(t, runs, 0.1, 0, "-target", "5%")
	var hits int
	for i := range ps {
		for r := range 2 {
			if ps[i][r] <= 0.025 {
				hits++
			}
		}
	}
	n := float64(2 * runs)
	if rate, se := float64(hits)/n, math.Sqrt(0.025*0.975/n); math.Abs(rate-0.025) > 4*se {
		t.Errorf("rows' p <= 0.025 in %.4f of %d A/A rows, want 0.025 ± %.4f", rate, int(n), 4*se)
	}
	_, vs := simDuet(t, runs, 0.1, 0.05, "-target", "5%")
	var worse int
	for _, v := range vs {
		if v[1] == abstat.Worse {
			worse++
		}
	}
	if rate := float64(worse) / float64(runs); rate < 0.8-4*math.Sqrt(0.8*0.2/float64(runs)) {
		t.Errorf("Noisy 5%% slower called worse in %.4f of %d runs, want at least 0.8", rate, runs)
	}
	t.Logf("planned duet, %d runs: A/A p <= 0.025 in %.4f of rows; 5%% on Noisy called worse in %.4f", runs, float64(hits)/n, float64(worse)/float64(runs))
}

// called reports whether a verdict calls a row changed.
func called(v abstat.Verdict) bool {
	return v == abstat.Worse || v == abstat.Better || v == abstat.Changed
}
