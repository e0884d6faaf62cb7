//go:build linux

package abplan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kbench/kbench/internal/abfile"
	"github.com/kbench/kbench/internal/abmath"
	"github.com/kbench/kbench/internal/abstat"
)

// PlanFiles plans a run from a pilot already run (kbcompare -plan): two
// result files, A's boots and B's, or one whose boots, taken in turn,
// stand for both sides of an A/A pilot, at their -count, with each
// package's boot cost from the first file (bootCost, where > 0, in its
// place).
func PlanFiles(opts Options, bootCost float64, paths ...string) (*Design, error) {
	if len(paths) < 1 || len(paths) > 2 {
		return nil, fmt.Errorf("a plan reads one pilot file or two, not %d", len(paths))
	}
	files, units, err := abfile.Read(paths...)
	if err != nil {
		return nil, err
	}
	rep := abstat.Grouped(files, units)
	rows := RowsOf(rep)
	opts.Pilot = len(files[0].Boots)
	if len(files) == 2 {
		opts.Pilot = min(opts.Pilot, len(files[1].Boots))
	} else {
		opts.Pilot /= 2
		for i := range rows {
			var m [2][]float64
			for j, x := range rows[i].Medians[0] {
				m[j%2] = append(m[j%2], x)
			}
			rows[i].Medians = m
		}
	}
	if opts.Pilot < 2 {
		return nil, fmt.Errorf("%s: a pilot of %d boot(s) a side: want at least 2 a side, or 4 boots in one file (a plan needs the boots' spread)", strings.Join(paths, " and "), opts.Pilot)
	}
	opts.MaxBoots = max(opts.MaxBoots, opts.Pilot)
	for _, row := range rep.Primaries() {
		if a := row.Samples[0]; a != nil {
			for _, v := range a.Values {
				opts.Count = max(opts.Count, len(v))
			}
		}
	}
	d, err := New(opts)
	if err != nil {
		return nil, err
	}
	costs := BootCosts(files[:1])
	for _, r := range rows {
		if bootCost > 0 {
			costs[r.Pkg] = bootCost
		}
	}
	var spent float64
	for _, c := range costs {
		spent += 2 * float64(opts.Pilot) * c
	}
	for _, r := range rows {
		spent += 2 * float64(opts.Pilot*opts.Count) * r.Sample
	}
	d.Plan(rows, costs, spent)
	return d, nil
}

// BootCosts is, per package import path, the seconds of one of its
// boots besides its samples (the VM's boot, go test's start), from its
// boots' wall times ("ok" lines) against their timed samples
// (iterations × sec/op): a least-squares intercept where the timed
// totals differ by half or more, else the wall time past the timed.
func BootCosts(files []*abfile.File) map[string]float64 {
	type key struct{ pkg, boot string }
	timed := map[key]float64{}
	for _, f := range files {
		for _, res := range f.Results {
			for _, v := range res.Values {
				if v.Unit == "sec/op" {
					timed[key{res.Config["pkg"], res.Boot}] += float64(res.Iters) * v.Value
				}
			}
		}
	}
	xs, ys := map[string][]float64{}, map[string][]float64{}
	for _, f := range files {
		for _, p := range f.Passed {
			xs[p.Pkg] = append(xs[p.Pkg], timed[key{p.Pkg, p.Boot}])
			ys[p.Pkg] = append(ys[p.Pkg], p.Seconds)
		}
	}
	out := map[string]float64{}
	for pkg, x := range xs {
		out[pkg] = fitBoot(x, ys[pkg])
	}
	return out
}

// fitBoot is Boot of wall = Boot + k × timed over a package's boots, k
// (the b.N ramp, a row's setup) at least 1.
func fitBoot(x, y []float64) float64 {
	mx, _ := abmath.MeanVar(x)
	my, _ := abmath.MeanVar(y)
	k := 1.0
	if len(x) >= 3 && slices.Min(x) > 0 && slices.Max(x) >= 1.5*slices.Min(x) {
		var sxy, sxx float64
		for i := range x {
			sxy += (x[i] - mx) * (y[i] - my)
			sxx += (x[i] - mx) * (x[i] - mx)
		}
		k = max(sxy/sxx, 1)
	}
	return max(my-k*mx, 0)
}

// sampleCost is the median timed seconds of a row's sec/op samples
// (iterations × value); 0 where no iteration count is known.
func sampleCost(s *abstat.BootSamples) float64 {
	var t []float64
	for i, v := range s.Values {
		for j, x := range v {
			if n := s.Iters[i][j]; n > 0 {
				t = append(t, float64(n)*x)
			}
		}
	}
	if len(t) == 0 {
		return 0
	}
	return abmath.Median(t)
}
