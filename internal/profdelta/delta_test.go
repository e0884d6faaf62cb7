//go:build linux

package profdelta

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/kbench/kbench/internal/kprofile"
)

const injected = FixtureInjected

// shares is each boot's share of the stacks that hold fn (leaf only:
// self) among all its samples.
func shares(counts []map[string]int64, fn string, self bool) []float64 {
	var out []float64
	for _, c := range counts {
		var n, total int64
		for k, v := range c {
			total += v
			frames := strings.Split(k, ";")
			if self && frames[0] == fn || !self && strings.Contains(";"+k+";", ";"+fn+";") {
				n += v
			}
		}
		out = append(out, float64(n)/float64(total))
	}
	return out
}

func find(fs []Func, name string) *Func {
	for i := range fs {
		if fs[i].Name == name {
			return &fs[i]
		}
	}
	return nil
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }

// TestInjected compares 4 boots a side, the new side with one function
// injected at 10%: it leads both forms by t, and every share and spread
// is the per-boot shares' mean and sample standard deviation.
func TestInjected(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	old, oldCounts := FixtureBoots(r, 4, 0)
	new, newCounts := FixtureBoots(r, 4, 0.10)
	d, err := Compute(old, new, DefaultOptions)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range forms(d) {
		if len(f.Funcs) == 0 || f.Funcs[0].Name != injected {
			t.Fatalf("%s: first is %+v, want %s", f.Form, f.Funcs, injected)
		}
		top := f.Funcs[0]
		if top.Old.Mean != 0 || top.Old.SD != 0 || !math.IsInf(float64(top.Rel), 1) || !(top.Q <= 0.05) {
			t.Errorf("%s: injected %+v: want old share 0 ± 0, rel +Inf, q <= 0.05", f.Form, top)
		}
		want := shares(newCounts, injected, f.Form == Self)
		m, sd := meanSD(want)
		if !near(top.New.Mean, m) || !near(float64(top.New.SD), float64(sd)) || !near(float64(top.Change), m) || len(top.New.Boots) != 4 {
			t.Errorf("%s: injected new share %v ± %v (change %v), want %v ± %v", f.Form, top.New.Mean, top.New.SD, top.Change, m, sd)
		}
		if !(m > 0.085 && m < 0.095) { // 10% of the base, which is 10/11 of the boot
			t.Errorf("%s: the injected share is %v, want about 0.0909", f.Form, m)
		}
		for i := 1; i < len(f.Funcs); i++ {
			if byNoise(f.Funcs[i-1], f.Funcs[i]) > 0 {
				t.Errorf("%s: %s (t %v) before %s (t %v)", f.Form, f.Funcs[i-1].Name, f.Funcs[i-1].T, f.Funcs[i].Name, f.Funcs[i].T)
			}
		}
		if find(f.Funcs, "main.work") != nil {
			t.Errorf("%s: a user frame listed", f.Form)
		}
		if find(f.Funcs, "tiny_fn") != nil {
			t.Errorf("%s: a function below MinShare listed", f.Form)
		}
	}
	for _, c := range []struct {
		fn   string
		self bool
	}{{"__seccomp_filter", true}, {"do_syscall_64", false}, {"_raw_spin_lock", false}} {
		fs := d.Children
		if c.self {
			fs = d.Self
		}
		f := find(fs, c.fn)
		if f == nil {
			t.Fatalf("%s missing (self %v)", c.fn, c.self)
		}
		for side, s := range []Share{f.Old, f.New} {
			want := shares([][]map[string]int64{oldCounts, newCounts}[side], c.fn, c.self)
			m, sd := meanSD(want)
			if !near(s.Mean, m) || !near(float64(s.SD), float64(sd)) || !(sd > 0) {
				t.Errorf("%s side %d: %v ± %v, want %v ± %v", c.fn, side, s.Mean, s.SD, m, sd)
			}
			for i := range want {
				if !near(s.Boots[i], want[i]) {
					t.Errorf("%s side %d boot %d: %v, want %v", c.fn, side, i, s.Boots[i], want[i])
				}
			}
		}
	}
	if d.Boots[0][0] != "boot1" || len(d.Boots[1]) != 4 {
		t.Errorf("boots %v", d.Boots)
	}
	if want := (kprofile.Sampling{Event: "cpu-clock", Hz: 4000, Scope: "system-wide"}); len(d.Sampling[0]) != 1 || d.Sampling[0][0] != want {
		t.Errorf("sampling %+v, want %+v", d.Sampling, want)
	}

}

func mean(x []float64) float64 { m, _ := meanSD(x); return m }

// TestSameSides compares two draws of one kernel: no function moves
// beyond its noise (q <= 0.05).
func TestSameSides(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	a, _ := FixtureBoots(r, 4, 0)
	b, _ := FixtureBoots(r, 4, 0)
	d, err := Compute(a, b, DefaultOptions)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range forms(d) {
		if len(f.Funcs) < 3 {
			t.Fatalf("%s: %d functions", f.Form, len(f.Funcs))
		}
		for _, fn := range f.Funcs {
			if fn.Q <= 0.05 {
				t.Errorf("%s: %s moved in an A/A: %+v", f.Form, fn.Name, fn)
			}
		}
	}
}

func TestComputeRefusesEmptySide(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	a, _ := FixtureBoots(r, 2, 0)
	empty := []Boot{{ID: "x", Profiles: []*profile.Profile{FixtureProfile(4000, nil)}}}
	if _, err := Compute(a, empty, DefaultOptions); err == nil || !strings.Contains(err.Error(), "new side") {
		t.Errorf("a side without samples: %v", err)
	}
	d, err := Compute(a, append(empty, a...), DefaultOptions)
	if err != nil || d.Empty[1] != 1 || len(d.Boots[1]) != 2 {
		t.Errorf("an empty boot beside others: %v, empty %v, boots %v", err, d.Empty, d.Boots)
	}
}

// TestDir reads a directory a subdirectory a boot, and refuses what
// kprofile could not have written.
func TestDir(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	boots, _ := FixtureBoots(r, 3, 0)
	dir := t.TempDir()
	k := Key{"seccompbench", kprofile.RowStem("Load/shape=stress-ng-2")}
	for _, b := range boots {
		if err := WriteBoot(filepath.Join(dir, b.ID), k, b); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(dir, "A.txt"), []byte("not a profile"), 0o644)
	d, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !d.Has(k) || d.Has(Key{"seccompbench", "Other-2"}) || len(d.Boots) != 3 {
		t.Fatalf("index %+v", d)
	}
	got, err := d.Load(k)
	if err != nil || len(got) != 3 || got[2].ID != "boot3" || len(got[0].Profiles) != 2 {
		t.Fatalf("Load: %v, %+v", err, got)
	}
	if sum(got[1].Profiles[1], 0, nil) != sum(boots[1].Profiles[1], 0, nil) {
		t.Error("Load read back other samples than were written")
	}

	flat := t.TempDir()
	if err := WriteBoot(flat, k, boots[0]); err != nil {
		t.Fatal(err)
	}
	if d, err := ReadDir(flat); err != nil || len(d.Boots) != 1 || d.Boots[0] != "." {
		t.Errorf("a flat directory: %v %+v", err, d)
	}
	if err := WriteBoot(filepath.Join(flat, "boot2"), k, boots[1]); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadDir(flat); err == nil || !strings.Contains(err.Error(), "both in it") {
		t.Errorf("a directory of both forms: %v", err)
	}
	bad := t.TempDir()
	os.WriteFile(filepath.Join(bad, "seccompbench.Load.pb.gz"), nil, 0o644)
	if _, err := ReadDir(bad); err == nil || !strings.Contains(err.Error(), "not a profile name") {
		t.Errorf("a misnamed profile: %v", err)
	}
	if _, err := ReadDir(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no profile") {
		t.Errorf("an empty directory: %v", err)
	}
}

// TestComm adds another process's samples to the new side, a heavy
// function of its own: with Options.Comm the shares are the benchmark's
// alone, as without that process; without it, that process leads.
func TestComm(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	old, _ := FixtureBoots(r, 3, 0)
	new, _ := FixtureBoots(r, 3, 0.10)
	want, err := Compute(old, new, Options{MinShare: DefaultOptions.MinShare, Comm: regexp.MustCompile("^fixture$")})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range new {
		other := FixtureProfile(4000, map[string]int64{"other_hot_fn;do_syscall_64": 20000})
		for _, s := range other.Sample {
			s.Label["comm"] = []string{"qemu-system-x86"}
		}
		merged, err := profile.Merge([]*profile.Profile{b.Profiles[0], other})
		if err != nil {
			t.Fatal(err)
		}
		b.Profiles[0] = merged
	}
	got, err := Compute(old, new, Options{MinShare: DefaultOptions.MinShare, Comm: regexp.MustCompile("^fixture$")})
	if err != nil {
		t.Fatal(err)
	}
	if got.Comm != "^fixture$" || find(got.Self, "other_hot_fn") != nil || len(got.Self) != len(want.Self) {
		t.Fatalf("with Comm: %+v", got.Self)
	}
	for i := range want.Self {
		if g, w := got.Self[i], want.Self[i]; g.Name != w.Name || !near(g.New.Mean, w.New.Mean) || !near(float64(g.New.SD), float64(w.New.SD)) {
			t.Errorf("with Comm, %d: %s %v ± %v, want %s %v ± %v", i, g.Name, g.New.Mean, g.New.SD, w.Name, w.New.Mean, w.New.SD)
		}
	}
	all, err := Compute(old, new, DefaultOptions)
	if err != nil {
		t.Fatal(err)
	}
	if f := find(all.Self, "other_hot_fn"); f == nil || !(f.New.Mean > 0.5) {
		t.Errorf("without Comm, the other process's function: %+v", f)
	}
}

// perOp is each boot's cpu nanoseconds per op in the stacks that hold
// fn (leaf only: self): samples at 4000 Hz, 250µs each, over the boot's
// two runs of ops ops.
func perOp(counts []map[string]int64, fn string, self bool, ops int64) []float64 {
	sh := shares(counts, fn, self)
	var out []float64
	for i, c := range counts {
		var total int64
		for _, v := range c {
			total += v
		}
		out = append(out, sh[i]*float64(total)*250e3/float64(2*ops))
	}
	return out
}

// TestPerOp checks the per-op figures of TestInjected's comparison: the
// lists are ordered by the per-op t, each function's per-op mean and sd
// are those of its per-boot cpu time over the boot's ops, and the shares
// stay beside them.
func TestPerOp(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	old, oldCounts := FixtureBoots(r, 4, 0)
	new, newCounts := FixtureBoots(r, 4, 0.10)
	d, err := Compute(old, new, DefaultOptions)
	if err != nil {
		t.Fatal(err)
	}
	if d.Unit != "cpu nanoseconds" || len(d.Ops[0]) != 4 || d.Ops[1][3] != 2*FixtureOps {
		t.Fatalf("unit %q ops %v, want cpu nanoseconds, 200 a boot", d.Unit, d.Ops)
	}
	for _, f := range forms(d) {
		top := f.Funcs[0]
		if top.Name != injected || top.PerOp.Old.Mean != 0 || !(top.PerOp.Q <= 0.05) {
			t.Fatalf("%s: first %+v, want %s per op from 0", f.Form, top, injected)
		}
		for side, counts := range [][]map[string]int64{oldCounts, newCounts} {
			for _, fn := range []string{injected, "do_syscall_64", "__seccomp_filter"} {
				got := find(f.Funcs, fn)
				if got == nil {
					if fn == "do_syscall_64" && f.Form == Self {
						continue
					}
					t.Fatalf("%s: %s missing", f.Form, fn)
				}
				want := perOp(counts, fn, f.Form == Self, FixtureOps)
				m, sd := meanSD(want)
				s := []Share{got.PerOp.Old, got.PerOp.New}[side]
				if !near(s.Mean, m) || !(near(float64(s.SD), float64(sd)) || math.IsNaN(float64(sd)) && math.IsNaN(float64(s.SD))) {
					t.Errorf("%s %s side %d: %v ± %v ns/op, want %v ± %v", f.Form, fn, side, s.Mean, s.SD, m, sd)
				}
				if ws := shares(counts, fn, f.Form == Self); !near([]Share{got.Old, got.New}[side].Mean, mean(ws)) {
					t.Errorf("%s %s side %d: share %v, want %v", f.Form, fn, side, []Share{got.Old, got.New}[side].Mean, mean(ws))
				}
			}
		}
		for i := 1; i < len(f.Funcs); i++ {
			if a, b := math.Abs(float64(f.Funcs[i-1].PerOp.T)), math.Abs(float64(f.Funcs[i].PerOp.T)); a < b {
				t.Errorf("%s: %s (per-op t %v) before %s (t %v)", f.Form, f.Funcs[i-1].Name, a, f.Funcs[i].Name, b)
			}
		}
	}
}

// TestDiluted is the A/B in which one function's share balloons
// (FixtureDiluted): by share, a function that only got diluted has the
// larger |t|; per op, the ballooning function comes first (with
// children, it or its caller do_syscall_64, whose stacks hold it) and the
// others change within their noise.
func TestDiluted(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	old, new, _, newCounts := FixtureDiluted(r, 4)
	d, err := Compute(old, new, DefaultOptions)
	if err != nil {
		t.Fatal(err)
	}
	if m := mean(shares(newCounts, injected, true)); !(m > 0.8 && m < 0.9) {
		t.Fatalf("the injected share is %v, want about 0.85", m)
	}
	for _, f := range forms(d) {
		holds := map[string]bool{injected: true}
		if f.Form == Children {
			holds["do_syscall_64"] = true
		}
		if !holds[f.Funcs[0].Name] {
			t.Errorf("%s: first by per-op t is %s, want %s", f.Form, f.Funcs[0].Name, injected)
		}
		byShare := slices.Clone(f.Funcs)
		for i := range byShare {
			byShare[i].PerOp = byShare[i].Stat
		}
		slices.SortFunc(byShare, byNoise)
		if byShare[0].Name == injected {
			t.Errorf("%s: by share t the injected function is first too: the fixture does not dilute", f.Form)
		}
		for _, fn := range f.Funcs {
			if holds[fn.Name] {
				if !(fn.PerOp.Change > 0 && fn.PerOp.Q <= 0.05) {
					t.Errorf("%s: %s per op %+v: want a rise beyond noise", f.Form, fn.Name, fn.PerOp)
				}
				continue
			}
			if fn.Change >= 0 || !(fn.Q <= 0.05) {
				t.Errorf("%s: %s share %+v: want a fall beyond noise (dilution)", f.Form, fn.Name, fn.Stat)
			}
			if fn.PerOp.Q <= 0.05 || math.Abs(float64(fn.PerOp.Rel)) > 0.05 {
				t.Errorf("%s: %s changed per op: %+v", f.Form, fn.Name, fn.PerOp)
			}
		}
	}
}

// TestWithoutOps compares profiles of which one does not record its
// ops (written before kprofile did): Compute refuses them, naming the
// boot.
func TestWithoutOps(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	old, _ := FixtureBoots(r, 4, 0)
	new, _ := FixtureBoots(r, 4, 0.10)
	p := new[2].Profiles[1]
	p.Comments = slices.DeleteFunc(slices.Clone(p.Comments), func(c string) bool { return strings.HasPrefix(c, "kbench ops:") })
	if _, err := Compute(old, new, DefaultOptions); err == nil || !strings.Contains(err.Error(), "new side, boot "+new[2].ID+": a profile without its op count") {
		t.Fatalf("one profile without ops: %v, want it refused", err)
	}
}

// TestComputeOpsOverflow: a boot whose profiles' op counts add up past
// int64 is refused, not divided by a wrapped count.
func TestComputeOpsOverflow(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	good, _ := fixtureBoots(r, 3, FixtureOps, 0.02, 0, 0)
	huge, _ := fixtureBoots(r, 3, math.MaxInt64, 0.02, 0, 0)
	_, err := Compute(good, huge, DefaultOptions)
	if err == nil || !strings.Contains(err.Error(), "new side, boot boot1") || !strings.Contains(err.Error(), "past 2^63") {
		t.Fatalf("Compute with op counts past int64: err %v, want the new side's boot1 refused", err)
	}
}
