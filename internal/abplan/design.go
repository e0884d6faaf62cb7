//go:build linux

package abplan

import (
	"cmp"
	"fmt"
	"math"
	"sort"

	"github.com/kbench/kbench/internal/abmath"
	"github.com/kbench/kbench/internal/abstat"
)

// Options are a design's knobs.
type Options struct {
	// Target is the relative change each row is planned to detect with
	// Power (0.8), at Alpha (the report's q level) over the rows planned.
	Target, Alpha, Power float64
	// Threshold is the report's under the design: the smallest |change|
	// called better or worse, below Target (threshold).
	Threshold float64
	// Pilot is the pilot's boots a side, Count the -count of every boot,
	// pilot and stage 2 alike, MaxBoots the most boots a side a row may
	// get (past it the row is out of reach).
	Pilot, Count, MaxBoots int
	Budget                 float64 // where > 0, bounds the run's seconds, both sides, by A's costs (Plan)
	Paired                 bool    // plans pairs of boots run at once (kbab -duet), s0² from their differences
}

// DefaultPilot is the pilot's boots a side: at the family's level
// (0.05 over 86 rows) Stein's test asks 6.4 times the boots of a known
// spread at 3, 1.85 times at 6, 1.38 times at 10.
const DefaultPilot = 6

// DefaultCount is a planned run's -count where the go test arguments
// set none: the fixed design's.
const DefaultCount = 10

// DefaultOptions plan for target with the report's alpha and threshold
// (5%), at most target/2 (docs/comparing.md, "kbab -target", says why).
func DefaultOptions(target float64) Options {
	return Options{Target: target, Alpha: abstat.DefaultOptions.Alpha, Power: abmath.TargetPower,
		Threshold: min(abstat.DefaultOptions.Threshold, target/2), Pilot: DefaultPilot, Count: DefaultCount, MaxBoots: 30}
}

// Row is one row's boots so far, as a design reads them.
type Row struct {
	Pkg, Name string       // import path; full name
	Medians   [2][]float64 // each side's boot medians in boot order
	Sample    float64      // the seconds of one of A's samples
}

// Status is where a row stands in a design.
type Status string

const (
	Running    Status = "running"      // until it holds its planned boots
	OutOfReach Status = "out of reach" // the rule asks more than MaxBoots
	OverBudget Status = "over budget"  // its boots do not fit the budget
	NoPilot    Status = "no pilot"     // it lacks pilot boots on a side
)

// Design is a planned run: the pilot, then the boots Stein's rule gives
// each row, under a budget; kbab and the simulations drive it (Next).
type Design struct {
	Opts    Options
	Level   float64 // each row's two-sided level (Rule.Level)
	Pkgs    []*DesignPkg
	Planned bool    // the pilot is done and the rows planned
	Seconds float64 // the run's planned cost, both sides, by A's costs
	Cut     bool    // the budget stopped the run before every running row held its boots (Next)
}

// DesignPkg is one package's rows: one go test a boot runs its pending
// ones. BootCost is the seconds of one of A's boots besides its samples.
type DesignPkg struct {
	Pkg      string
	BootCost float64
	Rows     []*DesignRow
}

// DesignRow is one row's plan: S0sq is the pilot's pooled variance of
// boot medians on Scale, Need the boots a side the rule asks, Boots
// those the row runs to (Need where Running, else the pilot's), Done
// those it holds (the fewer of the two sides').
type DesignRow struct {
	Pkg, Name         string
	Scale             abmath.Scale
	Rule              abmath.Rule
	S0sq              float64
	Need, Boots, Done int
	Status            Status
	Sample            float64
	center            float64 // A's pilot mean on Scale: a linear row's changes are relative to it
}

// pending reports whether the row runs and lacks boots.
func (r *DesignRow) pending() bool { return r.Status == Running && r.Done < r.Boots }

// Run is one go test of a boot: a package's pending rows at Count (as
// kbab.json records it).
type Run struct {
	Pkg   string   `json:"pkg"`
	Count int      `json:"count"`
	Rows  []string `json:"rows"`
}

// New is a design before its pilot.
func New(opts Options) (*Design, error) {
	switch {
	case !(opts.Target > 0 && opts.Target < 1):
		return nil, fmt.Errorf("target %v: want a relative change above 0 and below 1", opts.Target)
	case !(opts.Threshold >= 0 && opts.Threshold < opts.Target):
		return nil, fmt.Errorf("gate %v: want at least 0 and below the target %v, or a change of the target is called in half the runs at most", opts.Threshold, opts.Target)
	case opts.Pilot < 2:
		return nil, fmt.Errorf("pilot of %d boots a side: want at least 2, for a spread", opts.Pilot)
	case opts.Count < 1:
		return nil, fmt.Errorf("-count %d: want at least 1", opts.Count)
	case opts.MaxBoots < opts.Pilot:
		return nil, fmt.Errorf("at most %d boots a side, fewer than the pilot's %d", opts.MaxBoots, opts.Pilot)
	}
	return &Design{Opts: opts}, nil
}

// PilotBoots is the pilot's boots, both sides.
func (d *Design) PilotBoots() int { return 2 * d.Opts.Pilot }

// Plan plans every row from its first Pilot boots a side only (stage 2
// never enters s0), with each package's BootCost in costs and the
// pilot's seconds, both sides, in spent. A row already holding boots
// keeps them (Done), so that a resumed run plans as the first did.
func (d *Design) Plan(rows []Row, costs map[string]float64, spent float64) {
	o := d.Opts
	d.Level = o.Alpha / float64(max(len(rows), 1))
	d.Pkgs, d.Planned, d.Seconds = nil, true, spent
	byPkg := map[string]*DesignPkg{}
	for _, r := range rows {
		pp := byPkg[r.Pkg]
		if pp == nil {
			pp = &DesignPkg{Pkg: r.Pkg, BootCost: costs[r.Pkg]}
			byPkg[r.Pkg] = pp
			d.Pkgs = append(d.Pkgs, pp)
		}
		pp.Rows = append(pp.Rows, d.planRow(r))
	}
	d.admit(spent)
}

// planRow is one row's plan from its pilot.
func (d *Design) planRow(r Row) *DesignRow {
	o := d.Opts
	rp := &DesignRow{Pkg: r.Pkg, Name: r.Name, Sample: r.Sample, Done: held(r)}
	var pilot [2][]float64
	for s := range 2 {
		pilot[s] = r.Medians[s][:min(len(r.Medians[s]), o.Pilot)]
	}
	rp.Rule = abmath.Rule{Level: d.Level, Power: o.Power, N0: o.Pilot, MaxBoots: o.MaxBoots, Paired: o.Paired}
	if len(pilot[0]) < o.Pilot || len(pilot[1]) < o.Pilot {
		rp.Status, rp.Boots, rp.Need = NoPilot, o.Pilot, o.Pilot
		return rp
	}
	rp.Scale = scaleOf(pilot)
	a, b := rp.Scale.ToAll(pilot[0]), rp.Scale.ToAll(pilot[1])
	rp.center, _ = abmath.MeanVar(a)
	rp.S0sq = rp.Rule.S0sq(a, b)
	rp.Rule.Shift = rp.Scale.Shift(o.Target, rp.center)
	rp.Rule.Threshold = rp.Scale.Shift(o.Threshold, rp.center)
	rp.Need = rp.Rule.Boots(rp.S0sq)
	rp.Status, rp.Boots = Running, rp.Need
	if rp.Need > o.MaxBoots {
		rp.Status, rp.Boots = OutOfReach, o.Pilot
	}
	return rp
}

// scaleOf is the row's Scale from its pilot: logs where every median is
// positive, else values relative to the magnitude of A's median (1 where
// it is 0), so that B's level does not set the unit.
func scaleOf(pilot [2][]float64) abmath.Scale {
	if sc := abmath.ScaleOf(pilot[0], pilot[1]); sc.Log {
		return sc
	}
	return abmath.Scale{Unit: cmp.Or(math.Abs(abmath.Median(pilot[0])), 1)}
}

// held is the boots a side a row holds.
func held(r Row) int { return min(len(r.Medians[0]), len(r.Medians[1])) }

// admit fits the running rows into the budget, adding the row whose
// boots add the least to the planned seconds (each package's rows by
// their boots) until the next would pass it; the rest are OverBudget.
// Only A's costs and the pilot's spreads enter.
func (d *Design) admit(spent float64) {
	var stage2 float64
	type cand struct {
		pp   *DesignPkg
		rows []*DesignRow // running rows by boots
		in   int          // how many are admitted
	}
	var cands []*cand
	for _, pp := range d.Pkgs {
		c := &cand{pp: pp}
		for _, rp := range pp.Rows {
			if rp.Status == Running {
				c.rows = append(c.rows, rp)
			}
		}
		sort.SliceStable(c.rows, func(i, j int) bool { return c.rows[i].Boots < c.rows[j].Boots })
		cands = append(cands, c)
	}
	// cost of the first k rows of c: boots past the pilot of its
	// neediest, and each row's samples.
	cost := func(c *cand, k int) float64 {
		if k == 0 {
			return 0
		}
		extra := c.rows[k-1].Boots - d.Opts.Pilot
		s := 2 * float64(extra) * c.pp.BootCost
		for _, rp := range c.rows[:k] {
			s += 2 * float64((rp.Boots-d.Opts.Pilot)*d.Opts.Count) * rp.Sample
		}
		return s
	}
	for {
		var best *cand
		bestAdd := math.Inf(1)
		for _, c := range cands {
			if c.in < len(c.rows) {
				if add := cost(c, c.in+1) - cost(c, c.in); add < bestAdd {
					best, bestAdd = c, add
				}
			}
		}
		if best == nil {
			break
		}
		// A row the pilot decides alone costs nothing more: always in.
		if b := d.Opts.Budget; b > 0 && bestAdd > 0 && spent+stage2+bestAdd > b {
			break
		}
		stage2 += bestAdd
		best.in++
	}
	for _, c := range cands {
		for _, rp := range c.rows[c.in:] {
			rp.Status, rp.Boots = OverBudget, d.Opts.Pilot
		}
	}
	d.Seconds = spent + stage2
}

// Update records the boots a side each planned row holds now.
func (d *Design) Update(held func(pkg, name string) int) {
	for _, pp := range d.Pkgs {
		for _, rp := range pp.Rows {
			rp.Done = held(rp.Pkg, rp.Name)
		}
	}
}

// Next is what the next pair of boots runs, given the seconds spent so
// far (A's boots doubled): the whole command during the pilot (pilot
// true), then per package its pending rows. Nil where no row is
// pending, or where the pair would pass the budget: then Cut is set.
func (d *Design) Next(spent float64) (runs []Run, pilot bool) {
	if !d.Planned {
		return nil, true
	}
	if d.Cut {
		return nil, false
	}
	var secs float64 // one boot of runs, by A's costs
	for _, pp := range d.Pkgs {
		var names []string
		for _, rp := range pp.Rows {
			if rp.pending() {
				if names == nil {
					secs += pp.BootCost
				}
				names = append(names, rp.Name)
				secs += float64(d.Opts.Count) * rp.Sample
			}
		}
		if len(names) > 0 {
			runs = append(runs, Run{Pkg: pp.Pkg, Count: d.Opts.Count, Rows: names})
		}
	}
	if b := d.Opts.Budget; b > 0 && len(runs) > 0 && spent+2*secs > b {
		d.Cut = true
		return nil, false
	}
	return runs, false
}

// Find returns the plan of row name in package pkg, nil where none.
func (d *Design) Find(pkg, name string) *DesignRow {
	for _, pp := range d.Pkgs {
		if pp.Pkg == pkg {
			for _, rp := range pp.Rows {
				if rp.Name == name {
					return rp
				}
			}
		}
	}
	return nil
}

// Progress counts the rows decided, pending, and without a verdict.
func (d *Design) Progress() (decided, pending, undecided int) {
	for _, pp := range d.Pkgs {
		for _, rp := range pp.Rows {
			switch {
			case rp.Status != Running:
				undecided++
			case rp.pending():
				pending++
			default:
				decided++
			}
		}
	}
	return
}

// Test is row r's test: Stein's statistic on its first Boots a side
// where it holds them, else undecided with the mde of those it holds;
// false where the design planned no row r.
func (d *Design) Test(r Row) (abstat.DesignTest, bool) {
	rp := d.Find(r.Pkg, r.Name)
	if rp == nil || !d.Planned {
		return abstat.DesignTest{}, false
	}
	n := held(r)
	res := abstat.DesignTest{Rule: RuleName, Boots: n, Need: rp.Need, MDE: math.Inf(1)}
	if n > 0 && rp.Status != NoPilot {
		res.MDE = rp.Scale.Change(rp.Rule.MDE(rp.S0sq, n), rp.center)
	}
	switch {
	case rp.Status == NoPilot:
		res.Why = "no pilot: the row lacks pilot boots on a side"
	case rp.Status != Running:
		res.Why = fmt.Sprintf("%s: the rule asks %d boots a side", rp.Status, rp.Need)
	case n < rp.Boots:
		res.Why = fmt.Sprintf("cut short at %d of %d boots a side", n, rp.Boots)
	default:
		res = stein(RuleName, rp.Rule, rp.Scale, rp.S0sq, rp.center, r.Medians[0][:rp.Boots], r.Medians[1][:rp.Boots])
		res.Need = rp.Need
	}
	return res, true
}

// stein is the decided test of rule on boot medians a, b (n a side),
// with the pilot's variance s0sq, its changes relative to c on sc.
func stein(name string, rule abmath.Rule, sc abmath.Scale, s0sq, c float64, a, b []float64) abstat.DesignTest {
	n := len(a)
	ma, _ := abmath.MeanVar(sc.ToAll(a))
	mb, _ := abmath.MeanVar(sc.ToAll(b))
	diff, half := mb-ma, rule.Half(s0sq, n, abmath.Confidence)
	rel := func(d float64) float64 { return sc.Change(d, c) }
	return abstat.DesignTest{Rule: name, Decided: true, Boots: n, Need: n, P: rule.P(diff, s0sq, n),
		Change: rel(diff), Lo: rel(diff - half), Hi: rel(diff + half), MDE: rel(rule.MDE(s0sq, n))}
}

// PairedRule names the fixed duet's test in reports.
const PairedRule = "paired t-test of duet pairs"

// Paired is the fixed duet's test of a row (kbab -duet without
// -target) as abstat.Options.Design: the paired t-test of its pairs'
// differences on the row's scale, as Stein's rule (Paired) whose pilot
// is every pair, so that it agrees with the planned duet.
func Paired(alpha float64) func(*abstat.Table, *abstat.Row) (abstat.DesignTest, bool) {
	return func(_ *abstat.Table, row *abstat.Row) (abstat.DesignTest, bool) {
		old, new := row.Samples[0], row.Samples[1]
		if old == nil || new == nil || old.Boots() != new.Boots() || old.Boots() < 2 {
			return abstat.DesignTest{Rule: PairedRule, MDE: math.Inf(1),
				Why: "not one boot median a side in each of 2 or more pairs (a row failed or skipped in a boot)"}, true
		}
		n, sc := old.Boots(), row.Scale
		a, b := old.Medians(), new.Medians()
		r := abmath.Rule{Level: alpha, Power: abmath.TargetPower, N0: n, MaxBoots: n, Paired: true}
		c, _ := abmath.MeanVar(sc.ToAll(a))
		return stein(PairedRule, r, sc, r.S0sq(sc.ToAll(a), sc.ToAll(b)), c, a, b), true
	}
}

// PredictedPower is the chance the rule calls a change of the target
// for a row whose boot medians spread like its pilot's (σ = s0).
func (rp *DesignRow) PredictedPower() float64 {
	if rp.Status == NoPilot {
		return math.NaN()
	}
	return rp.Rule.PowerAt(rp.Rule.Shift, math.Sqrt(rp.S0sq))
}

// RuleName names the design's test in reports.
const RuleName = "Stein's two-stage t-test"

// TestRow is the design as abstat.Options.Design: the Test of each
// Primary row it planned.
func (d *Design) TestRow(t *abstat.Table, row *abstat.Row) (abstat.DesignTest, bool) {
	return d.Test(rowOf(t, row, nil))
}

// rowOf is a report row as the design reads it, with the seconds of
// one of A's samples from secOp, the row's sec/op row (nil: 0).
func rowOf(t *abstat.Table, row *abstat.Row, secOp *abstat.Row) Row {
	r := Row{Pkg: t.Path, Name: row.Name}
	for s, bs := range row.Samples {
		if bs != nil {
			r.Medians[s] = bs.Medians()
		}
	}
	if secOp != nil && secOp.Samples[0] != nil {
		r.Sample = sampleCost(secOp.Samples[0])
	}
	return r
}

// RowsOf are a report's Primary rows as the design reads them.
func RowsOf(rep *abstat.Report) []Row {
	var rows []Row
	for t, row := range rep.Primaries() {
		secOp := row
		if t.Unit != "sec/op" {
			secOp = rep.Find(t.Pkg, "sec/op", row.Name)
		}
		rows = append(rows, rowOf(t, row, secOp))
	}
	return rows
}
