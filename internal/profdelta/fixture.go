//go:build linux

package profdelta

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/kbench/kbench/internal/kprofile"
)

// FixtureProfile builds a profile of the form kprofile writes, cpu-clock
// at hz: for each stack, written "leaf;caller;...;outermost" with
// kernel function names, that many samples, each of one period. A
// frame "user:NAME" is a user frame of the test binary. For the tests
// of this package and of its callers (kbcompare's), which need profiles
// of known shares without a machine that samples.
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

// FixtureBoots draws n boots of two runs each (FixtureProfile, 4000
// Hz): every stack's samples jittered by up to ±10% a boot, and with
// share > 0 FixtureInjected added under do_syscall_64 at share of the
// boot's other samples, jittered by ±1%. It returns the boots and each
// boot's samples by stack.
func FixtureBoots(r *rand.Rand, n int, share float64) ([]Boot, []map[string]int64) {
	var boots []Boot
	var counts []map[string]int64
	for b := range n {
		c := map[string]int64{}
		var total int64
		for _, k := range slices.Sorted(maps.Keys(fixtureBase)) {
			c[k] = int64(math.Round(float64(fixtureBase[k]) * (0.9 + 0.2*r.Float64())))
			total += c[k]
		}
		if share > 0 {
			c[FixtureInjected+";do_syscall_64"] = int64(math.Round(share * float64(total) * (0.99 + 0.02*r.Float64())))
		}
		runs := [2]map[string]int64{{}, {}}
		for k, v := range c {
			runs[0][k], runs[1][k] = v/2, v-v/2
		}
		boots = append(boots, Boot{ID: fmt.Sprintf("boot%d", b+1),
			Profiles: []*profile.Profile{FixtureProfile(4000, runs[0]), FixtureProfile(4000, runs[1])}})
		counts = append(counts, c)
	}
	return boots, counts
}
