//go:build linux

package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/abplan"
	"github.com/kbench/kbench/internal/abseries"
)

// TestBisect: a bisection over 8 kernels (6 images between good and
// bad), Work 10% slower from K6 on: the planned A/B of K1 against K8
// confirms the step, then the search boots middle images in rounds with
// K1 and K8 beside them, only Work's package and row at the design's
// -count, and ends at K6. A failed step boot resumes, asking the boots
// the first run would have.
func TestBisect(t *testing.T) {
	f := newFake(t)
	f.knob("planned", 0)
	f.knob("seed", 38)
	list := f.writeList(8, 6)
	self, _ := os.Executable()
	args := []string{"-bisect", list, "-row", "^Work", "-out", f.out, "-vmexec", self, "--", ".", "-run=^$", "-bench=Work"}
	pilot := 2 * abplan.DefaultPilot
	f.knob("fail-at", pilot+2) // the second step boot
	code, _, stderr := f.run(nil, args...)
	if code != exitBootFailed || !strings.Contains(stderr, "confirming") || !strings.Contains(stderr, "(step 1)") {
		t.Fatalf("failed step boot: exit %d, want %d after the confirmation\n%s", code, exitBootFailed, stderr)
	}
	os.Remove(filepath.Join(f.dir, "fail-at"))
	code, stdout, stderr := f.run(nil, args...)
	if code != 0 {
		t.Fatalf("bisection: exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, w := range []string{
		"kbab -bisect " + list + " -row ^Work: fake Work-2, good K1, bad K8, 6 images between",
		"confirmation: K1 against K8 after 12 boots: worse (+10",
		"step 1: K4 (bzImage-a kbab.k=4): 3 rounds, good: ",
		"first bad: K6 (bzImage-a kbab.k=6 step=Work)\n",
		"with good and bad beside it",
		"beyond an allowance for its own offset (none: one image)",
	} {
		if !strings.Contains(stdout, w) {
			t.Errorf("report lacks %q:\n%s", w, stdout)
		}
	}
	// The step boots: rounds of good, image, bad, then bad, image, good;
	// Work alone at the design's count.
	ks := f.callKernels()
	var rounds []int
	for _, m := range regexp.MustCompile(`(?m)^step \d+: .*: (\d+) rounds`).FindAllStringSubmatch(stdout, -1) {
		n, _ := strconv.Atoi(m[1])
		rounds = append(rounds, n)
	}
	ks = slices.Delete(ks, pilot+1, pilot+2) // the failed boot, retried
	step := ks[len(ks)-3*sum(rounds):]
	for _, n := range rounds {
		for r := range n {
			g, b := 1, 8
			if r%2 == 1 {
				g, b = 8, 1
			}
			if step[3*r] != g || step[3*r+2] != b || step[3*r+1] == 1 || step[3*r+1] == 8 || step[3*r+1] != step[1] {
				t.Errorf("step round %d boots %v: want K%d, the step's image, K%d", r+1, step[3*r:3*r+3], g, b)
			}
		}
		step = step[3*n:]
	}
	for c := range ks[pilot:] {
		call := f.calls()[pilot+c]
		if !strings.Contains(call, "-test.count=10") || !strings.Contains(call, "-test.bench=^BenchmarkWork$") {
			t.Errorf("step call %q: want -test.count=10 and -bench of Work alone", call)
		}
	}
	if !strings.Contains(stderr, "resuming") {
		t.Errorf("second run did not resume:\n%s", stderr)
	}
	// Done: a rerun boots nothing and reports the same.
	calls := len(f.calls())
	if code2, stdout2, _ := f.run(nil, args...); code2 != 0 || stdout2 != stdout || len(f.calls()) != calls {
		t.Errorf("rerun of a finished bisection: exit %d, %d more calls, report:\n%s\nwant:\n%s", code2, len(f.calls())-calls, stdout2, stdout)
	}
}

// TestBisectOffset: a list of one image allows for no kernel's own
// offset; a list of separate images (builds) for the series' floor.
func TestBisectOffset(t *testing.T) {
	for _, c := range []struct {
		images []string
		want   float64
	}{{[]string{"/a", "/a", "/a"}, 0}, {[]string{"/a", "/b", "/a"}, abseries.DefaultOptions.Offset}} {
		b := &bisectDesign{d: &driver{st: &state{}}}
		for _, img := range c.images {
			b.d.st.Settings.Kernels = append(b.d.st.Settings.Kernels, kernel{Image: img})
		}
		if got := b.options().Offset; got != c.want {
			t.Errorf("images %v: offset %v, want %v", c.images, got, c.want)
		}
	}
}

// TestBisectNotOneStep: Work 5% slower from K3 on and 10% from K6 on:
// the first step's image, K4, sits halfway between good and bad, and the
// bisection ends "not one step", naming it and what it measured, with no
// first bad image, exit 1.
func TestBisectNotOneStep(t *testing.T) {
	f := newFake(t)
	f.knob("planned", 0)
	f.knob("seed", 38)
	var b strings.Builder
	for k := 1; k <= 8; k++ {
		fmt.Fprintf(&b, "K%d %s kbab.k=%d %s\n", k, f.imgA, k, map[bool]string{true: "half=Work", false: ""}[k >= 3 && k < 6]+map[bool]string{true: "step=Work", false: ""}[k >= 6])
	}
	list := filepath.Join(f.dir, "two-steps.list")
	os.WriteFile(list, []byte(b.String()), 0o666)
	self, _ := os.Executable()
	code, stdout, stderr := f.run(nil, "-bisect", list, "-row", "^Work", "-out", f.out, "-vmexec", self, "--", ".", "-run=^$", "-bench=Work")
	if code != 1 || !strings.Contains(stdout, "step 1: K4 (bzImage-a kbab.k=4 half=Work): 3 rounds, like neither good nor bad: not one step: ") ||
		!strings.Contains(stdout, "not one step: K4 is like neither good nor bad (0.5") || strings.Contains(stdout, "first bad:") {
		t.Fatalf("two steps: exit %d, want 1, not one step at K4\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

// TestBisectNoDifference: where good and bad do not differ on the row,
// the bisection says it cannot tell and boots no image, exit 1.
func TestBisectNoDifference(t *testing.T) {
	f := newFake(t)
	f.knob("planned", 0)
	f.knob("seed", 38)
	list := f.writeList(4, 0)
	self, _ := os.Executable()
	code, stdout, stderr := f.run(nil, "-bisect", list, "-row", "Work", "-out", f.out, "-vmexec", self, "--", ".", "-run=^$", "-bench=Work")
	if code != 1 || !strings.Contains(stdout, "cannot tell: good and bad do not differ on the row") {
		t.Fatalf("A/A bisection: exit %d, want 1, cannot tell\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, k := range f.callKernels() {
		if k != 1 && k != 4 {
			t.Errorf("booted K%d, an image between: nothing to bisect", k)
		}
	}
}

// TestBisectUndecided: where the confirmation's planned A/B gives the
// row no verdict (at -target 1% its rows need more boots than the design allows), the
// bisection says so, not that good and bad are alike, and boots no
// image, exit 1.
func TestBisectUndecided(t *testing.T) {
	f := newFake(t)
	f.knob("planned", 0)
	f.knob("seed", 36)
	list := f.writeList(4, 0)
	self, _ := os.Executable()
	code, stdout, stderr := f.run(nil, "-bisect", list, "-row", "Noisy", "-target", "1%", "-out", f.out, "-vmexec", self, "--", ".", "-run=^$", "-bench=Noisy")
	if code != 1 || !strings.Contains(stdout, "cannot tell: the planned A/B gave the row no verdict (its boots do not reach -target 1.0%") {
		t.Fatalf("undecided confirmation: exit %d, want 1, no verdict\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if n := len(f.calls()); n != 2*abplan.DefaultPilot {
		t.Errorf("%d boots, want the pilot's %d alone", n, 2*abplan.DefaultPilot)
	}
}

func sum(v []int) int {
	n := 0
	for _, x := range v {
		n += x
	}
	return n
}

// TestSimBisectLoop is the bisection's guarantees on kbab's own loop:
// kbab -bisect run whole (boots through go test and the stand-in
// vmexec, the files, kbab.json, the comparisons, abseries.Search) over
// the stand-in's Noisy row (boot medians ±3%) at -target 5%, the first
// bad image drawn per run, each run seeded; each ends right (the step's
// kernel, or either half step's), wrong, not one step, undecided, or
// unconfirmed. Wrong at most 10% of the confirmed runs, plus three
// binomial standard errors; the cases with kernels' own offsets list an
// image file each (separate builds: Search allows for offsets). KBAB_SIM_RUNS=N
// runs each case N times (results/2026-12-05-bisect-sims-3.md);
// unset, it skips: a run is 20 to 100 stand-in boots.
func TestSimBisectLoop(t *testing.T) {
	runs, _ := strconv.Atoi(os.Getenv("KBAB_SIM_RUNS"))
	if runs <= 0 {
		t.Skip("KBAB_SIM_RUNS=N runs each case N times")
	}
	for ci, c := range []struct {
		name   string
		images int
		wide   int       // more rows in the command: a family of 2+wide
		shifts []float64 // a step per entry: its size; two: at K3 and K6
		other  string    // words every kernel's cmdline holds
		offset float64
	}{
		{name: "README: 1 row, 2 images, step 5%", images: 2, shifts: []float64{0.05}},
		{name: "1 row, 6 images, step 5%", images: 6, shifts: []float64{0.05}},
		{name: "4 rows, 6 images, step 5%", images: 6, wide: 2, shifts: []float64{0.05}},
		{name: "suite (86 rows), 6 images, step 5%", images: 6, wide: 84, shifts: []float64{0.05}},
		{name: "1 row, 6 images, step 3.5%", images: 6, shifts: []float64{0.035}},
		{name: "1 row, 6 images, two steps of 2.5% (K3, K6)", images: 6, shifts: []float64{0.025, 0.025}},
		{name: "1 row, 6 images, step 5%, drift 30% of it a 100 boots", images: 6, shifts: []float64{0.05}, other: "drift=Noisy:0.0146"},
		{name: "1 row, 6 builds, step 5%, offsets 0.2 boot spread", images: 6, shifts: []float64{0.05}, offset: 0.2},
		{name: "1 row, 6 builds, step 5%, offsets 0.5 boot spread", images: 6, shifts: []float64{0.05}, offset: 0.5},
	} {
		t.Run(strconv.Itoa(ci), func(t *testing.T) {
			var n [5]int // right, wrong, not one step, undecided, unconfirmed
			boots := 0
			for i := range runs {
				seed := uint64(46000 + 1000*ci + i)
				first := []int{int(seed*2654435761%1000) % (c.images + 1)}
				if len(c.shifts) == 2 {
					first = []int{1, 4}
				}
				f := newFake(t)
				f.knob("planned", 0)
				f.knob("seed", seed)
				f.knob("wide", c.wide)
				var b strings.Builder
				for k := 1; k <= c.images+2; k++ {
					img := f.imgA
					if c.offset > 0 { // separate builds: an image each
						img = filepath.Join(f.dir, fmt.Sprintf("K%d.img", k))
						data, _ := os.ReadFile(f.imgA)
						os.WriteFile(img, data, 0o666)
					}
					fmt.Fprintf(&b, "K%d %s kbab.k=%d %s", k, img, k, c.other)
					for j, s := range c.shifts {
						if k-2 >= first[j] {
							fmt.Fprintf(&b, " shift=Noisy:%g", s)
						}
					}
					if c.offset > 0 {
						fmt.Fprintf(&b, " offset=Noisy:%g", c.offset)
					}
					b.WriteString("\n")
				}
				list := filepath.Join(f.dir, "sim.list")
				os.WriteFile(list, []byte(b.String()), 0o666)
				self, _ := os.Executable()
				code, stdout, stderr := f.run(nil, "-bisect", list, "-row", "^Noisy", "-out", f.out, "-vmexec", self, "--", ".", "-run=^$", "-bench=.")
				if code > 1 {
					t.Fatalf("run %d: exit %d\n%s\n%s", i, code, stdout, stderr)
				}
				boots += len(f.calls())
				var want []string
				for _, fb := range first {
					want = append(want, fmt.Sprintf("first bad: K%d ", fb+2))
				}
				switch {
				case slices.ContainsFunc(want, func(w string) bool { return strings.Contains(stdout, w) }):
					n[0]++
				case strings.Contains(stdout, "first bad: "):
					n[1]++
				case strings.Contains(stdout, "not one step: "):
					n[2]++
				case strings.Contains(stdout, "good and bad do not differ") || strings.Contains(stdout, "gave the row no verdict"):
					n[4]++
				default:
					n[3]++
				}
			}
			pct := func(k int) float64 { return 100 * float64(n[k]) / float64(runs) }
			t.Logf("%s: %d runs: right %.0f%%, wrong %.0f%%, not one step %.0f%%, undecided %.0f%%, unconfirmed %.0f%%; %.0f boots a run",
				c.name, runs, pct(0), pct(1), pct(2), pct(3), pct(4), float64(boots)/float64(runs))
			confirmed := float64(runs - n[4])
			if confirmed > 0 && float64(n[1])/confirmed > 0.1+3*math.Sqrt(0.09/confirmed) {
				t.Errorf("%s: wrong in %d of %.0f confirmed runs, want at most 10%%", c.name, n[1], confirmed)
			}
		})
	}
}
