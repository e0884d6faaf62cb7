//go:build linux

package abplan

import (
	"fmt"
	"math"
	"slices"

	"github.com/kbench/kbench/internal/abfile"
	"github.com/kbench/kbench/internal/abmath"
	"github.com/kbench/kbench/internal/abstat"
)

// PlanOptions are a plan's knobs.
type PlanOptions struct {
	// Target is the minimum detectable effect each row should reach at
	// abmath.TargetPower and Alpha (0.05: the threshold).
	Target, Alpha float64
	// MinCount and MaxCount clip a package's -count: at least 3 samples
	// a boot, so that a boot's median and the within-boot spread stay
	// estimable, and at most 50.
	MinCount, MaxCount int
	// MaxBoots is the most boots a side a plan asks of a row; a row that
	// would need more at its package's count is out of reach and planned
	// at MaxBoots, to come as close as it can.
	MaxBoots int
	// Counts fixes the -count of packages, by import path.
	Counts map[string]int
	// BootCost, where > 0, is the seconds of one boot of every package,
	// in place of what the files' go test times say (PackageCost).
	BootCost float64
	// PerRow plans each row at Alpha, for a report that judges rows by
	// their own p (Options.PerRow). Otherwise a row is planned at Alpha
	// over the rows planned (RowAlpha): the report judges by the q of
	// the whole comparison, and a row that changed alone has the
	// smallest p, whose q is p times the rows, so that is the level at
	// which it must reach the target.
	PerRow bool
}

// DefaultPlanOptions plan for the default threshold.
var DefaultPlanOptions = PlanOptions{Target: 0.05, Alpha: abstat.DefaultOptions.Alpha, MinCount: 3, MaxCount: 50, MaxBoots: 30}

// FixedBoots and FixedCount are the fixed design a plan is set against:
// the README's 3+3 boots at -count=10.
const (
	FixedBoots = 3
	FixedCount = 10
)

// Plan says, per row and package, how many boots a side and samples per
// boot reach the target mde, and what that costs against the fixed
// design.
type Plan struct {
	Opts PlanOptions
	// RowAlpha is the level each row is planned at: Opts.Alpha, over the
	// rows planned unless Opts.PerRow.
	RowAlpha float64
	Pkgs     []*PlanPkg
	// Seconds is the planned design's cost, both sides, from the first
	// boot; FixedSeconds the fixed design's (FixedBoots a side at
	// FixedCount), with the same costs.
	Seconds, FixedSeconds float64
	// Reached counts the rows whose predicted mde reaches the target
	// with the plan, FixedReached with the fixed design.
	Reached, FixedReached int
	Rows                  int
}

// PlanPkg is one package's plan: one -count for its rows (one go test
// per boot runs them all), as many boots as its neediest row.
type PlanPkg struct {
	Pkg  string // import path
	Name string // its last element, as the report's tables
	// BootCost is the seconds of one boot of the package besides its
	// samples: the VM's boot, go test's start and the package's setup.
	BootCost float64
	Count    int // planned -count
	Boots    int // boots a side: the most any row needs
	// Seconds is the planned cost, both sides: each boot's BootCost, and
	// each row's samples for as many boots as it needs.
	Seconds  float64
	Rows     []*PlanRow
	perTimed float64 // Cost.PerTimed
}

// PlanRow is one row's plan, in its Primary unit.
type PlanRow struct {
	Name  string
	Scale abmath.Scale
	Comp  abstat.Components
	// Sample is the seconds one sample takes: abstat.SampleCost times the
	// package's Cost.PerTimed.
	Sample float64
	// OwnCount is the row's own Kalibera-Jones count, clipped: the
	// square root of the cost ratio (boot / sample) times the variance
	// ratio (within / between, the median's factor in it); the package
	// runs its rows at one Count.
	OwnCount int
	// Boots is the boots a side the row needs at its package's Count
	// (MaxBoots where out of reach), MDE the mde predicted there, and
	// Reach whether MDE <= Target within MaxBoots.
	Boots int
	MDE   float64
	Reach bool
	// FixedMDE is the mde predicted for the fixed design.
	FixedMDE float64
	// Done is the boots a side the row holds (the fewer of the two).
	Done int
	at   float64 // the row's center on its Scale: its changes are relative to it
}

// PlanFiles reads one result file (a pilot) or two (both sides of one)
// and plans from them, with the first file's costs.
func PlanFiles(opts PlanOptions, paths ...string) (*Plan, error) {
	if len(paths) < 1 || len(paths) > 2 {
		return nil, fmt.Errorf("a plan reads one pilot file or two, not %d", len(paths))
	}
	files, units, err := abfile.Read(paths...)
	if err != nil {
		return nil, err
	}
	r := abstat.Grouped(files, units)
	// The costs are the first file's: B's times would carry the
	// difference into the plan.
	return NewPlan(r, PackageCost(files[:1]), opts), nil
}

// Cost is what one boot of a package costs besides its samples, and
// what its samples cost over their timed part.
type Cost struct {
	// Boot is the seconds of a boot besides its samples: the VM's boot,
	// go test's start, the package's TestMain.
	Boot float64
	// PerTimed is the seconds go test spends per second of timed
	// samples (iterations × sec/op): at least 1, more for the b.N ramp
	// and a row's setup, which every -count run repeats.
	PerTimed float64
}

// PackageCost is, per package import path, its Cost from the go test
// wall times of its boots (their "ok" lines) against the timed samples
// of each boot: a least-squares line through (timed, wall) where the
// boots' timed totals differ by half or more (a pilot at two counts),
// else all of the wall time past the timed part counted to the boot.
func PackageCost(files []*abfile.File) map[string]Cost {
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
	out := map[string]Cost{}
	for pkg, x := range xs {
		out[pkg] = fitCost(x, ys[pkg])
	}
	return out
}

// fitCost fits wall = Boot + PerTimed × timed over a package's boots.
func fitCost(x, y []float64) Cost {
	mx, _ := abmath.MeanVar(x)
	my, _ := abmath.MeanVar(y)
	if len(x) >= 3 && slices.Min(x) > 0 && slices.Max(x) >= 1.5*slices.Min(x) {
		var sxy, sxx float64
		for i := range x {
			sxy += (x[i] - mx) * (y[i] - my)
			sxx += (x[i] - mx) * (x[i] - mx)
		}
		k := max(sxy/sxx, 1)
		return Cost{Boot: max(my-k*mx, 0), PerTimed: k}
	}
	return Cost{Boot: max(my-mx, 0), PerTimed: 1}
}

// NewPlan plans the rows of r (grouped, with their Samples) from their
// spreads and the first side's costs alone: no figure of the plan
// depends on the difference between the sides, so that a run which
// continues by it keeps the false-alarm rate of its final test. costs
// are each package's (PackageCost, of the first side's file).
func NewPlan(r *abstat.Report, costs map[string]Cost, opts PlanOptions) *Plan {
	p := &Plan{Opts: opts}
	byPkg := map[string]*PlanPkg{}
	for t, row := range r.Primaries() {
		old, new := row.Samples[0], row.Samples[1]
		if old == nil && new == nil {
			continue
		}
		pkg := t.Path
		if pkg == "" {
			pkg = t.Pkg
		}
		pp := byPkg[pkg]
		if pp == nil {
			c := costs[pkg]
			pp = &PlanPkg{Pkg: pkg, Name: t.Pkg, BootCost: c.Boot, perTimed: max(c.PerTimed, 1)}
			if opts.BootCost > 0 {
				pp.BootCost = opts.BootCost
			}
			byPkg[pkg] = pp
			p.Pkgs = append(p.Pkgs, pp)
		}
		var all [][]float64
		for _, s := range row.Samples {
			if s != nil {
				all = append(all, s.All())
			}
		}
		rp := &PlanRow{Name: row.Name, Scale: abmath.ScaleOf(all...)}
		// Centered on the first side's median: both sides' would carry
		// the difference into the plan on the linear scale.
		rp.at = rp.Scale.To(abmath.Median(all[0]))
		rp.Comp = abstat.ComponentsOf(rp.Scale, old, new)
		secOp := row
		if t.Unit != "sec/op" {
			secOp = r.Find(t.Pkg, "sec/op", row.Name)
		}
		if secOp != nil {
			// The first side's cost where it holds the row: the other's
			// would carry the difference into the plan.
			first := secOp.Samples[0]
			if first == nil {
				first = secOp.Samples[1]
			}
			rp.Sample = pp.perTimed * abstat.SampleCost(first)
		}
		rp.Done = math.MaxInt
		for _, s := range row.Samples {
			if s != nil {
				rp.Done = min(rp.Done, s.Boots())
			}
		}
		pp.Rows = append(pp.Rows, rp)
	}
	rows := 0
	for _, pp := range p.Pkgs {
		rows += len(pp.Rows)
	}
	p.RowAlpha = opts.Alpha
	if !opts.PerRow && rows > 0 {
		p.RowAlpha = opts.Alpha / float64(rows)
	}
	rowOpts := opts
	rowOpts.Alpha = p.RowAlpha
	for _, pp := range p.Pkgs {
		pp.plan(rowOpts)
		for _, rp := range pp.Rows {
			p.Rows++
			if rp.Reach {
				p.Reached++
			}
			if rp.FixedMDE <= opts.Target {
				p.FixedReached++
			}
			p.FixedSeconds += 2 * FixedBoots * FixedCount * rp.Sample
		}
		p.FixedSeconds += 2 * FixedBoots * pp.BootCost
		p.Seconds += pp.Seconds
	}
	return p
}

// countSteps are the counts a plan weighs: the cost is flat near its
// least, and a finer grid buys nothing the spreads' uncertainty leaves.
var countSteps = []int{3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30, 40, 50}

// plan chooses the package's count (fixed by opts.Counts, else the one
// of least cost) and each row's boots at it.
func (pp *PlanPkg) plan(opts PlanOptions) {
	for _, rp := range pp.Rows {
		rp.OwnCount = rp.kjCount(pp.BootCost, opts)
		rp.FixedMDE = rp.mde(FixedBoots, FixedCount, opts.Alpha)
	}
	counts := []int{}
	if n, ok := opts.Counts[pp.Pkg]; ok && n > 0 {
		counts = append(counts, n)
	} else {
		for _, n := range countSteps {
			if n >= opts.MinCount && n <= opts.MaxCount {
				counts = append(counts, n)
			}
		}
		counts = append(counts, opts.MinCount, opts.MaxCount)
	}
	best := math.Inf(1)
	for _, n := range counts {
		boots, cost := pp.cost(n, opts)
		if cost < best {
			best, pp.Count, pp.Boots, pp.Seconds = cost, n, boots, cost
		}
	}
	for _, rp := range pp.Rows {
		rp.Boots, rp.Reach = rp.boots(pp.Count, opts)
		rp.MDE = rp.mde(rp.Boots, pp.Count, opts.Alpha)
	}
}

// cost is the package's cost, both sides, with count n: the most boots
// any row needs, each with its boot cost, and each row's samples for the
// boots it needs. A row out of reach at n weighs as if at MaxBoots.
func (pp *PlanPkg) cost(n int, opts PlanOptions) (boots int, seconds float64) {
	for _, rp := range pp.Rows {
		b, _ := rp.boots(n, opts)
		boots = max(boots, b)
		seconds += 2 * float64(b*n) * rp.Sample
	}
	return boots, seconds + 2*float64(boots)*pp.BootCost
}

// boots is how many boots a side reach the target with count n:
// MaxBoots and false where more would.
func (rp *PlanRow) boots(n int, opts PlanOptions) (int, bool) {
	sd := math.Sqrt(rp.Comp.CenterVar(n))
	target := rp.Scale.Shift(opts.Target, rp.at)
	b := abmath.Need(target, abstat.MinBoots, func(k int) float64 { return abmath.WelchShift(sd, k, k, opts.Alpha) })
	if b == 0 || b > opts.MaxBoots {
		return opts.MaxBoots, false
	}
	return b, true
}

// mde is the change detectable with b boots a side of n samples each.
func (rp *PlanRow) mde(b, n int, alpha float64) float64 {
	return rp.Scale.Change(abmath.WelchShift(math.Sqrt(rp.Comp.CenterVar(n)), b, b, alpha), rp.at)
}

// kjCount is Kalibera and Jones's optimal samples per boot for this
// row alone, clipped to the options' range: √((boot cost / sample cost)
// × (within-boot variance, as a boot's median feels it / boot effect)).
func (rp *PlanRow) kjCount(bootCost float64, opts PlanOptions) int {
	// The within-boot variance as a median feels it: count × the
	// sampling variance of a median of count, at the pilot's count.
	k := max(int(math.Round(rp.Comp.Count)), opts.MinCount)
	w, b := float64(k)*rp.Comp.Sampling(k), rp.Comp.Between
	var n float64
	switch {
	case w == 0:
		n = float64(opts.MinCount)
	case b == 0 || rp.Sample == 0:
		n = float64(opts.MaxCount)
	default:
		n = math.Sqrt(bootCost / rp.Sample * w / b)
	}
	return int(math.Round(min(max(n, float64(opts.MinCount)), float64(opts.MaxCount))))
}

// Find returns the plan of row name in package pkg (import path or its
// last element), nil where none.
func (p *Plan) Find(pkg, name string) *PlanRow {
	for _, pp := range p.Pkgs {
		if pp.Pkg == pkg || pp.Name == pkg {
			if i := slices.IndexFunc(pp.Rows, func(r *PlanRow) bool { return r.Name == name }); i >= 0 {
				return pp.Rows[i]
			}
		}
	}
	return nil
}
