//go:build linux

package profdelta

import (
	"bytes"
	"cmp"
	"flag"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/kbench/kbench/internal/kprofile"
)

// FixtureProfile builds a profile of the form kprofile writes, cpu-clock
// at hz: for each stack, written "leaf;caller;...;outermost" with
// kernel function names, that many samples, each of one period. A
// frame "user:NAME" is a user frame of the test binary. For the tests
// of this package, and, through the files TestFixtureFiles writes, of
// its callers (kbcompare's, kbab's), which need profiles of known shares
// without a machine that samples.
func FixtureProfile(hz int, stacks map[string]int64) *profile.Profile {
	period := int64(1e9 / hz)
	p := &profile.Profile{
		SampleType:        []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		DefaultSampleType: "cpu",
		PeriodType:        &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:            period,
		Comments:          []string{kprofile.Sampling{Event: "cpu-clock", Hz: hz, Scope: "system-wide"}.Header()},
	}
	kernel := &profile.Mapping{ID: 1, File: kprofile.KernelMapping, Limit: ^uint64(0), HasFunctions: true}
	user := &profile.Mapping{ID: 2, File: "/tmp/fixture.test", Start: 0x400000, Limit: 0x800000, HasFunctions: true}
	p.Mapping = []*profile.Mapping{kernel, user}
	locs := map[string]*profile.Location{}
	keys := make([]string, 0, len(stacks))
	for k := range stacks {
		keys = append(keys, k)
	}
	slices.Sort(keys) // a stable profile for a stable test
	for _, k := range keys {
		s := &profile.Sample{Value: []int64{stacks[k], stacks[k] * period},
			Label: map[string][]string{"comm": {"fixture"}, "mode": {"kernel"}, "pid": {"1"}, "cpu": {"0"}}}
		for _, name := range strings.Split(k, ";") {
			l := locs[name]
			if l == nil {
				m, fn := kernel, name
				if u, ok := strings.CutPrefix(name, "user:"); ok {
					m, fn = user, u
				}
				f := &profile.Function{ID: uint64(len(p.Function) + 1), Name: fn, SystemName: fn, Filename: m.File}
				p.Function = append(p.Function, f)
				l = &profile.Location{ID: uint64(len(p.Location) + 1), Mapping: m, Address: 0x1000 * uint64(len(p.Location)+1),
					Line: []profile.Line{{Function: f}}}
				p.Location = append(p.Location, l)
				locs[name] = l
			}
			s.Location = append(s.Location, l)
		}
		if strings.HasPrefix(k, "user:") {
			s.Label["mode"] = []string{"user"}
		}
		p.Sample = append(p.Sample, s)
	}
	return p
}

// WriteBoot writes b's profiles into dir (created) as KBENCH_PROFILE
// names row k's runs: a boot of a fixture Dir.
func WriteBoot(dir string, k Key, b Boot) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i, p := range b.Profiles {
		f, err := os.Create(filepath.Join(dir, kprofile.FileName(k.Pkg, k.Stem, i+1)))
		if err != nil {
			return err
		}
		err = p.Write(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// FixtureInjected is the function FixtureBoots injects.
const FixtureInjected = "bpf_jit_blind_constants"

// fixtureBase is a row's stacks and their samples a boot before jitter:
// kernel stacks, a user frame and a function below MinShare.
var fixtureBase = map[string]int64{
	"native_queued_spin_lock_slowpath;_raw_spin_lock;do_syscall_64": 3000,
	"__seccomp_filter;syscall_trace_enter;do_syscall_64":            2000,
	"clear_page_erms;exc_page_fault":                                1000,
	"user:main.work":                                                4000,
	"tiny_fn;do_syscall_64":                                         1,
}

// FixtureOps is the op count of each run of FixtureBoots, and of the old
// side of FixtureDiluted.
const FixtureOps = 100

// FixtureBoots draws n boots of two runs each (FixtureProfile, 4000
// Hz), each run of FixtureOps ops (kprofile.OpsComment): every stack's
// samples jittered by up to ±10% a boot, and with share > 0
// FixtureInjected added under do_syscall_64 at share of the boot's other
// samples, jittered by ±1%. It returns the boots and each boot's samples
// by stack.
func FixtureBoots(r *rand.Rand, n int, share float64) ([]Boot, []map[string]int64) {
	return fixtureBoots(r, n, FixtureOps, 0.10, share, 0.01)
}

// FixtureDiluted draws the two sides of an A/B in which FixtureInjected
// balloons: n boots a side, the base stacks at the same samples per op
// on both sides (jittered by ±2% a boot), the old side's runs of
// FixtureOps ops, the new side's of a tenth as many, with
// FixtureInjected taking about 85% of the new side's samples, its cost
// per op jittered by ±30% a boot. Every other function's share falls to
// about a seventh, in every boot alike, so the falls have a larger |t|
// than the injected function's rise; per op, only the injected function
// changed. It returns each side's boots and samples by stack.
func FixtureDiluted(r *rand.Rand, n int) (old, new []Boot, oldCounts, newCounts []map[string]int64) {
	old, oldCounts = fixtureBoots(r, n, FixtureOps, 0.02, 0, 0)
	new, newCounts = fixtureBoots(r, n, FixtureOps/10, 0.02, 5.7, 0.30)
	return old, new, oldCounts, newCounts
}

// fixtureBoots draws n boots of two runs of ops ops each: fixtureBase
// scaled to the ops (its counts are those of FixtureOps ops), each stack
// jittered by ±jitter a boot, and with share > 0 FixtureInjected at share
// of the boot's other samples, jittered by ±injJitter.
func fixtureBoots(r *rand.Rand, n int, ops int64, jitter, share, injJitter float64) ([]Boot, []map[string]int64) {
	var boots []Boot
	var counts []map[string]int64
	scale := float64(ops) / FixtureOps
	for b := range n {
		c := map[string]int64{}
		var total int64
		for _, k := range slices.Sorted(maps.Keys(fixtureBase)) {
			c[k] = max(1, int64(math.Round(scale*float64(fixtureBase[k])*(1-jitter+2*jitter*r.Float64()))))
			total += c[k]
		}
		if share > 0 {
			c[FixtureInjected+";do_syscall_64"] = int64(math.Round(share * float64(total) * (1 - injJitter + 2*injJitter*r.Float64())))
		}
		runs := [2]map[string]int64{{}, {}}
		for k, v := range c {
			runs[0][k], runs[1][k] = v/2, v-v/2
		}
		var ps []*profile.Profile
		for _, run := range runs {
			p := FixtureProfile(4000, run)
			p.Comments = append(p.Comments, kprofile.OpsComment(ops))
			ps = append(ps, p)
		}
		boots = append(boots, Boot{ID: fmt.Sprintf("boot%d", b+1), Profiles: ps})
		counts = append(counts, c)
	}
	return boots, counts
}

var update = flag.Bool("update", false, "rewrite the fixture's profile files (TestFixtureFiles)")

// fixtureSets are the profile files other packages' tests read, drawn
// as those tests once drew them: kbcompare's golden set "profiles" (3
// boots a side, the new side's with FixtureInjected at 10%), its
// diluted A/B (FixtureDiluted, 4 boots a side), and kbab's stand-in
// vmexec's boots of row Work-2, fast and slow (5% injected), call n of
// the stand-in seeded by n.
func fixtureSets() map[string][]Boot {
	sets := map[string][]Boot{}
	r := rand.New(rand.NewPCG(11, 12))
	ab := "../cmd/kbcompare/testdata/golden/profiles/profiles-"
	sets[ab+"old"], _ = FixtureBoots(r, 3, 0)
	sets[ab+"new"], _ = FixtureBoots(r, 3, 0.10)
	old, new, _, _ := FixtureDiluted(rand.New(rand.NewPCG(7, 8)), 4)
	sets["testdata/diluted/old"], sets["testdata/diluted/new"] = old, new
	for n := 1; n <= 12; n++ {
		for side, share := range map[string]float64{"fast": 0, "slow": 0.05} {
			b, _ := FixtureBoots(rand.New(rand.NewPCG(uint64(n), 40)), 1, share)
			b[0].ID = fmt.Sprintf("boot%d", n)
			sets["testdata/work/"+side] = append(sets["testdata/work/"+side], b[0])
		}
	}
	return sets
}

// TestFixtureFiles checks the fixture's profile files against what the
// fixture draws; -update writes them. Row Work-2 of package fake is
// kbab's stand-in's row, the others kbcompare's syscall row.
func TestFixtureFiles(t *testing.T) {
	for dir, boots := range fixtureSets() {
		k := Key{Pkg: "seccompbench", Stem: kprofile.RowStem("Syscall/work=getpid/kind=cached/filters=0-2")}
		if strings.Contains(dir, "/work/") {
			k = Key{Pkg: "fake", Stem: kprofile.RowStem("Work-2")}
		}
		for _, b := range boots {
			if *update {
				if err := WriteBoot(filepath.Join(dir, b.ID), k, b); err != nil {
					t.Fatal(err)
				}
				continue
			}
			for i, p := range b.Profiles {
				name := filepath.Join(dir, b.ID, kprofile.FileName(k.Pkg, k.Stem, i+1))
				data, err := os.ReadFile(name)
				got, perr := profile.ParseData(data)
				if err = cmp.Or(err, perr); err != nil {
					t.Fatalf("%v (go test ./internal/profdelta -run TestFixtureFiles -update writes it)", err)
				}
				var buf bytes.Buffer
				p.Write(&buf)
				want, _ := profile.Parse(&buf)
				if got.String() != want.String() {
					t.Errorf("%s is not the fixture's profile: go test ./internal/profdelta -run TestFixtureFiles -update", name)
				}
			}
		}
	}
}

// forms are d's lists with their form, self first.
func forms(d *Delta) []struct {
	Form  Form
	Funcs []Func
} {
	return []struct {
		Form  Form
		Funcs []Func
	}{{Self, d.Self}, {Children, d.Children}}
}

// sum adds value v of the samples keep takes (nil: all).
func sum(p *profile.Profile, v int, keep func(*profile.Sample) bool) int64 {
	var n int64
	for _, s := range p.Sample {
		if v >= 0 && v < len(s.Value) && (keep == nil || keep(s)) {
			n += s.Value[v]
		}
	}
	return n
}
