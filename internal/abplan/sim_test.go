//go:build linux

package abplan

import (
	"math"
	"math/rand/v2"
	"os"
	"path"
	"slices"
	"sync"
	"testing"

	"github.com/aclements/go-moremath/stats"

	"github.com/kbench/kbench/internal/abfile"
	"github.com/kbench/kbench/internal/abmath"
	"github.com/kbench/kbench/internal/abstat"
	"github.com/kbench/kbench/internal/abstat/sim"
)

// The simulations drive Design, the type kbab drives, on boots drawn from
// the real run of every package (sim.SuiteFile): a boot's median of a row
// is the median of Count of the row's real ns/op samples drawn with
// replacement, moved by the boot's layout, exp(ε), ε normal. Under -short
// they draw a few hundred runs; KBENCH_SIM_FULL=1 draws the sizes the
// results file reports (results/2026-12-03-sequential-design.md).

// full says whether to draw the full-size simulations.
func full() bool { return os.Getenv("KBENCH_SIM_FULL") != "" }

// simRow is a fixture row to draw boot medians of.
type simRow struct {
	pkg, name string
	ns        []float64 // its real ns/op samples
	sample    float64   // seconds of one sample: iterations × sec/op, median
	within    float64   // sim.SuiteRow.Within
	// smooth, where > 0, draws each sample as a fixture sample times
	// exp(smooth × N(0,1)): the smoothed bootstrap (Silverman's
	// bandwidth on logs, smoothBandwidth), whose samples are not bounded
	// by the fixture's ten values.
	smooth float64
}

func suiteRows(t testing.TB) []simRow {
	t.Helper()
	s := sim.LoadSuite(t)
	var rows []simRow
	for _, r := range s.Rows {
		ns := r.NsOp()
		var cost []float64
		for i, x := range ns {
			cost = append(cost, float64(r.Iters[i])*x*1e-9)
		}
		rows = append(rows, simRow{pkg: r.Pkg, name: r.Name, ns: ns, sample: med(cost), within: r.Within})
	}
	return rows
}

// suiteCosts are the fixture's packages' boot costs (BootCosts of its
// one boot: go test's time less the timed samples).
func suiteCosts(t *testing.T) map[string]float64 {
	t.Helper()
	files, _, err := abfile.Read(sim.File(t, sim.SuiteFile))
	if err != nil {
		t.Fatal(err)
	}
	return BootCosts(files)
}

func med(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	n := len(s)
	return (s[n/2] + s[(n-1)/2]) / 2
}

// boot draws one boot median of r at count samples, its layout of
// spread between (on logs), B's changed by change.
func (r *simRow) boot(rng *rand.Rand, count int, between, change float64) float64 {
	buf := make([]float64, count)
	for k := range buf {
		buf[k] = r.ns[rng.IntN(len(r.ns))]
		if r.smooth > 0 {
			buf[k] *= math.Exp(r.smooth * rng.NormFloat64())
		}
	}
	return med(buf) * math.Exp(between*rng.NormFloat64()) * (1 + change)
}

// medianSD is the spread of r's boot medians at count with layout
// spread between, on logs: drawn, 4000 boots (±1.1%).
func (r *simRow) medianSD(count int, between float64) float64 {
	rng := rand.New(rand.NewPCG(36, 99))
	var v []float64
	for range 4000 {
		v = append(v, math.Log(r.boot(rng, count, between, 0)))
	}
	m, _ := abmath.MeanVar(v)
	var ss float64
	for _, x := range v {
		ss += (x - m) * (x - m)
	}
	return math.Sqrt(ss / float64(len(v)-1))
}

// case_ is rows of the fixture to run a design on: each with its layout
// spread and B's change.
type case_ struct {
	rows    []simRow
	between []float64
	change  []float64
}

// drive runs design d on the rows as kbab runs it: the pilot's boots in
// the ABBA order, Plan from them with A's costs, then pairs of what Next
// names, Update after each, until Next names nothing; spent counts A's
// planned seconds doubled, as kbab counts A's boot times doubled. It
// returns the rows' boots.
func drive(rng *rand.Rand, d *Design, c case_, costs map[string]float64) []Row {
	o := d.Opts
	rows := make([]Row, len(c.rows))
	for i, r := range c.rows {
		rows[i] = Row{Pkg: r.pkg, Name: r.name, Sample: r.sample}
	}
	add := func(i, side int) {
		r := c.rows[i]
		ch := 0.0
		if side == 1 {
			ch = c.change[i]
		}
		rows[i].Medians[side] = append(rows[i].Medians[side], r.boot(rng, o.Count, c.between[i], ch))
	}
	var spent float64
	for b := range d.PilotBoots() {
		side := (b/2 + b) % 2 // ABBA, as kbab runs them
		seen := map[string]bool{}
		for i, r := range c.rows {
			add(i, side)
			if side == 0 {
				if !seen[r.pkg] {
					seen[r.pkg] = true
					spent += 2 * costs[r.pkg]
				}
				spent += 2 * float64(o.Count) * r.sample
			}
		}
	}
	d.Plan(rows, costs, spent)
	index := map[[2]string]int{}
	for i, r := range c.rows {
		index[[2]string{r.pkg, r.name}] = i
	}
	for range 2 * (o.MaxBoots + 1) {
		runs, _ := d.Next(spent)
		if len(runs) == 0 {
			break
		}
		var boot float64 // by A's costs, as Next counts it
		for _, run := range runs {
			boot += costs[run.Pkg]
			for _, name := range run.Rows {
				i := index[[2]string{run.Pkg, name}]
				add(i, 0)
				add(i, 1)
				boot += float64(run.Count) * c.rows[i].sample
			}
		}
		spent += 2 * boot
		d.Update(func(pkg, name string) int { return held(rows[index[[2]string{pkg, name}]]) })
	}
	return rows
}

// layoutDominated is the least share of a row's boot-median spread its
// layout makes for its boot medians to count as near normal (the rest
// is its median's sampling of the fixture's ten samples: bounded, with
// lighter tails than normal).
const layoutDominated = 0.87

// rowFor picks, for a row that needs need boots at level, a fixture row
// and the layout spread that makes it so: of the first package from
// pkgs[from] on where one is layout-dominated, the row whose median
// spread at Count is smallest; where none is, that row of the whole
// fixture. It returns the row, its layout spread and the spread of its
// boot medians.
func rowFor(t testing.TB, rows []simRow, pkgs []string, from int, need, level float64, o Options) (simRow, float64, float64) {
	t.Helper()
	shift := math.Log1p(o.Target)
	k := stats.StdNormal.InvCDF(1-level/2) + stats.StdNormal.InvCDF(o.Power)
	sigma := shift * math.Sqrt(need/2) / k
	var best simRow
	bestSD := math.Inf(1)
	for j := range pkgs {
		pkg := pkgs[(from+j)%len(pkgs)]
		var pb simRow
		pbSD := math.Inf(1)
		for _, r := range rows {
			if r.pkg != pkg || !(r.within > 0) {
				continue
			}
			if sd := r.medianSD(o.Count, 0); sd < pbSD {
				pb, pbSD = r, sd
			}
		}
		if pbSD < bestSD {
			best, bestSD = pb, pbSD
		}
		if pbSD <= math.Sqrt(1-layoutDominated*layoutDominated)*sigma {
			return pb, math.Sqrt(sigma*sigma - pbSD*pbSD), sigma
		}
	}
	if !(bestSD < sigma) {
		t.Fatalf("no row of the fixture needs as few as %g boots at -count %d", need, o.Count)
	}
	return best, math.Sqrt(sigma*sigma - bestSD*bestSD), sigma
}

// packages are the suite's packages in order.
func packages(rows []simRow) []string {
	var pkgs []string
	for _, r := range rows {
		if !slices.Contains(pkgs, r.pkg) {
			pkgs = append(pkgs, r.pkg)
		}
	}
	return pkgs
}

// rowAA runs draws A/As of row r (layout spread between) through Design
// with options o and counts the runs whose p <= level, and the boots a
// side they held in all; draw i is seeded seed+i.
func rowAA(r simRow, between float64, o Options, level float64, draws int, seed uint64, costs map[string]float64) (hits, boots int) {
	c := case_{rows: []simRow{r}, between: []float64{between}, change: []float64{0}}
	var mu sync.Mutex
	sim.Parallel(draws, func(i int) {
		rng := rand.New(rand.NewPCG(36, seed+uint64(i)))
		d, err := New(o)
		if err != nil {
			panic(err)
		}
		rowsOut := drive(rng, d, c, costs)
		res, _ := d.Test(rowsOut[0])
		mu.Lock()
		defer mu.Unlock()
		boots += res.Boots
		if res.Decided && res.P <= level {
			hits++
		}
	})
	return hits, boots
}

// smoothBandwidth is Silverman's rule of thumb on the logs of v: 0.9 ×
// min(sd, IQR/1.34) × n^(-1/5).
func smoothBandwidth(v []float64) float64 {
	logs := make([]float64, len(v))
	for i, x := range v {
		logs[i] = math.Log(x)
	}
	slices.Sort(logs)
	m, _ := abmath.MeanVar(logs)
	var ss float64
	for _, x := range logs {
		ss += (x - m) * (x - m)
	}
	sd := math.Sqrt(ss / float64(len(logs)-1))
	q := func(p float64) float64 { // linear interpolation
		h := p * float64(len(logs)-1)
		lo := int(h)
		if lo+1 >= len(logs) {
			return logs[len(logs)-1]
		}
		return logs[lo] + (h-float64(lo))*(logs[lo+1]-logs[lo])
	}
	spread := sd
	if iqr := (q(0.75) - q(0.25)) / 1.34; iqr > 0 && iqr < spread {
		spread = iqr
	}
	return 0.9 * spread * math.Pow(float64(len(logs)), -0.2)
}

// TestRowAA: one row at a time, through Design, for rows that need 3, 6,
// 10 and 20 boots a side at the level tested (a design that knew the
// spread would need them), each from another package of the fixture,
// with no gate: under no change p <= level in level's share of runs
// within ±20% (or three binomial standard errors, where more), at alpha
// = 0.05 and at the family's level (0.05/86: the row planned at the
// level Alpha over 86 rows gives it).
//
// Two kinds of row. Layout-dominated rows (layoutDominated), whose boot
// medians are near normal: the rate is within ±20% of the level. Rows
// whose boot medians spread much by their median's sampling, where the
// fixture has no layout-dominated row that needs so few boots: the
// median of Count of the fixture's ten samples is bounded by them, with
// lighter tails than normal, the test is conservative at the family's
// level, and only the upper bound (1.2 × the level) is asserted.
func TestRowAA(t *testing.T) { rowAACases(t, false) }

// TestRowAASmoothed: TestRowAA's rows and levels with every sample drawn
// by the smoothed bootstrap (each fixture sample jittered on logs by
// Silverman's bandwidth, smoothBandwidth), so that no boot median is
// bounded by the fixture's ten values, as no real boot's is: every rate,
// the quiet rows' at the family's level included, must be within ±20% of
// the level. The full run's figures are in
// results/2026-12-04-stein-tails.md.
func TestRowAASmoothed(t *testing.T) { rowAACases(t, true) }

// rowAACases runs TestRowAA's cases, the samples drawn by the plain or
// the smoothed bootstrap. With the plain one, a row whose boot medians
// are not layout-dominated is checked against the upper bound only.
func rowAACases(t *testing.T, smooth bool) {
	rows := suiteRows(t)
	if smooth {
		for i := range rows {
			rows[i].smooth = smoothBandwidth(rows[i].ns)
		}
	}
	costs := suiteCosts(t)
	pkgs := packages(rows)
	seed := uint64(0)
	if smooth {
		seed = 500000
	}
	for li, fam := range []bool{false, true} {
		for ni, need := range []float64{3, 6, 10, 20} {
			o := DefaultOptions(0.05)
			o.Threshold, o.MaxBoots = 0, 1000
			if fam {
				o.Alpha /= 86
			}
			level := o.Alpha
			// Enough draws for the tolerance to be three standard
			// errors: 0.2 × level = 3 √(level/n).
			draws := 400
			switch {
			case full():
				draws = int(225 / level)
			case !testing.Short():
				draws = 4000
			}
			if fam && !full() {
				draws = 2000 // only a gross failure shows: the full run has the figure
			}
			if fam && testing.Short() {
				continue
			}
			r, between, sigma := rowFor(t, rows, pkgs, ni+2*li, need, level, o)
			upperOnly := !smooth && between/sigma < layoutDominated
			pkg := r.pkg
			hits, boots := rowAA(r, between, o, level, draws, uint64(1000000*(10*li+ni))+seed, costs)
			rate := float64(hits) / float64(draws)
			se := math.Sqrt(level * (1 - level) / float64(draws))
			t.Logf("A/A %s, needs %g (σ %.4f, layout %.2f of it, smoothing %.4f): p <= %.2g in %d of %d runs (%.2f × level, SE %.2f ×); %.1f boots a side",
				path.Base(pkg)+" "+r.name, need, sigma, between/sigma, r.smooth, level, hits, draws, rate/level, se/level, float64(boots)/float64(draws))
			tol := max(0.2*level, 3*se)
			if rate-level > tol || (!upperOnly && level-rate > tol) {
				t.Errorf("A/A %s needs %g at level %.2g: rate %.2g, want within %.2g of the level", r.name, need, level, rate, tol)
			}
		}
	}
}

// powerDraws is how many runs a power simulation draws: 4000 in the full
// run (a share of 80% within ±0.6 points, one standard error).
func powerDraws() int {
	switch {
	case full():
		return 4000
	case testing.Short():
		return 200
	}
	return 1000
}

// TestRowPower: a change of exactly the target, 5% and 10% (-target
// 10%), on rows that need 3, 6, 10 and 20 boots at the family's level,
// with the design's gate: called worse in the share Rule.PowerAt
// predicts within 5 points, at least 80%, and at most 85% where the
// rule's boots are set by the spread (the pilot alone decides the row in
// at most a fifth of runs), each within three binomial
// standard errors. A row that needs fewer boots than the pilot's gets
// the pilot's, and more power.
func TestRowPower(t *testing.T) {
	rows := suiteRows(t)
	costs := suiteCosts(t)
	pkgs := packages(rows)
	draws := powerDraws()
	for ti, target := range []float64{0.05, 0.10} {
		for ni, need := range []float64{3, 6, 10, 20} {
			o := DefaultOptions(target)
			o.Alpha, o.MaxBoots = o.Alpha/86, 1000
			level := o.Alpha
			r, between, sigma := rowFor(t, rows, pkgs, ni+3*ti, need, level, o)
			c := case_{rows: []simRow{r}, between: []float64{between}, change: []float64{target}}
			var found, boots, floors int
			var pred float64
			var mu sync.Mutex
			sim.Parallel(draws, func(i int) {
				rng := rand.New(rand.NewPCG(37, uint64(100000*(10*ti+ni)+i)))
				d, _ := New(o)
				res, _ := d.Test(drive(rng, d, c, costs)[0])
				mu.Lock()
				defer mu.Unlock()
				rp := d.Pkgs[0].Rows[0]
				if i == 0 {
					pred = rp.Rule.PowerAt(rp.Rule.Shift, sigma)
				}
				if rp.Need <= o.Pilot { // the pilot alone decides the row
					floors++
				}
				boots += res.Boots
				if res.Decided && res.P <= level && res.Change >= o.Threshold {
					found++
				}
			})
			power, floor := float64(found)/float64(draws), float64(floors)/float64(draws)
			se := math.Sqrt(pred * (1 - pred) / float64(draws))
			t.Logf("+%.0f%% on %s, needs %g (σ %.4f): called worse in %.1f%% of %d runs (SE %.1f), predicted %.1f%%; %.1f boots a side, the pilot's alone in %.0f%%",
				100*target, path.Base(r.pkg)+" "+r.name, need, sigma, 100*power, draws, 100*se, 100*pred, float64(boots)/float64(draws), 100*floor)
			if math.Abs(power-pred) > max(0.05, 3*se) {
				t.Errorf("+%.0f%%, needs %g: simulated power %.1f%%, predicted %.1f%%: want within 5 points", 100*target, need, 100*power, 100*pred)
			}
			if power < 0.8-3*se || (floor <= 0.2 && power > 0.85+3*se) {
				t.Errorf("+%.0f%%, needs %g: a change of the target called worse in %.1f%% of runs, want at least 80%% (at most 85%% where the spread sets the boots)", 100*target, need, 100*power)
			}
		}
	}
}

// reportOf is the report kbab writes of drawn rows, judged by the
// design: one sec/op table per package, each boot its median (what the
// design and Welch's centers read), judged with opts and the design.
func reportOf(rows []Row, d *Design, opts abstat.Options) *abstat.Report {
	rep := &abstat.Report{BootMode: true}
	tables := map[string]*abstat.Table{}
	for _, r := range rows {
		t := tables[r.Pkg]
		if t == nil {
			t = &abstat.Table{Pkg: path.Base(r.Pkg), Path: r.Pkg, Unit: "sec/op", Better: -1}
			tables[r.Pkg] = t
			rep.Tables = append(rep.Tables, t)
		}
		row := &abstat.Row{Name: r.Name, Samples: make([]*abstat.BootSamples, 2)}
		for s := range 2 {
			row.Samples[s] = &abstat.BootSamples{}
			for b, m := range r.Medians[s] {
				row.Samples[s].Add(sim.BootID(s, b), m*1e-9, 0)
			}
			rep.Boots[s] = max(rep.Boots[s], len(r.Medians[s]))
		}
		t.Rows = append(t.Rows, row)
	}
	opts.Design, opts.Target = d.TestRow, d.Opts.Target
	rep.Opts = opts
	rep.Judge()
	return rep
}

// TestSuiteAA: whole-suite planned runs through Design and the report's
// judgement (q over the family, the design's gate), at the layout
// spreads of real comparisons (0.35 and 1.2 times each row's within-boot
// spread, sim.Comparison): an A/A gives a verdict on some row in at most 5%
// of runs, with no budget and with one that leaves most rows undecided;
// and in the same runs one row made exactly the target slower (of the
// rows a reference plan decides, one with the median boots) is called
// worse, without a budget, in the share Rule.PowerAt predicts for its
// spread within 5 points: the rule's power with out-of-reach runs
// counted as misses, which is less than Power for a row near MaxBoots.
func TestSuiteAA(t *testing.T) {
	if testing.Short() {
		t.Skip("whole-suite planned runs: seconds")
	}
	rows := suiteRows(t)
	costs := suiteCosts(t)
	draws := 100
	if full() {
		draws = 1000
	}
	for k, mult := range []float64{0.35, 1.2} {
		for _, budget := range []bool{false, true} {
			o := DefaultOptions(0.05)
			c := case_{rows: rows, between: make([]float64, len(rows)), change: make([]float64, len(rows))}
			for i, r := range rows {
				c.between[i] = mult * r.within
			}
			var pilot float64
			seen := map[string]bool{}
			for _, r := range rows {
				if !seen[r.pkg] {
					seen[r.pkg] = true
					pilot += costs[r.pkg]
				}
				pilot += float64(o.Count) * r.sample
			}
			pilot *= float64(d2(o))
			if budget {
				// A budget of half again the pilot: most rows' boots do not fit.
				o.Budget = 1.5 * pilot
			}
			// The changed row: the median-boots row of those a reference plan decides.
			ref, _ := New(o)
			drive(rand.New(rand.NewPCG(38, uint64(k))), ref, c, costs)
			var running []*DesignRow
			for _, pp := range ref.Pkgs {
				for _, rp := range pp.Rows {
					if rp.Status == Running {
						running = append(running, rp)
					}
				}
			}
			slices.SortStableFunc(running, func(a, b *DesignRow) int { return a.Boots - b.Boots })
			cr := running[len(running)/2]
			changed := slices.IndexFunc(rows, func(r simRow) bool { return r.pkg == cr.Pkg && r.name == cr.Name })
			// Its power as predicted for its true spread: out of reach
			// (more than MaxBoots) counts as not called.
			pred := cr.Rule.PowerAt(cr.Rule.Shift, rows[changed].medianSD(o.Count, c.between[changed]))
			var any, decided, worse, undecided int
			var mu sync.Mutex
			sim.Parallel(draws, func(i int) {
				rng := rand.New(rand.NewPCG(39, uint64(10000*(2*k+b2i(budget))+i)))
				d, _ := New(o)
				out := drive(rng, d, c, costs)
				rep := reportOf(out, d, abstat.Options{Threshold: o.Threshold, Alpha: o.Alpha})
				flagged := rep.Count(abstat.Worse) + rep.Count(abstat.Better) + rep.Count(abstat.Changed)
				// The same run with the changed row's B slower by the
				// target: the design never looks at the difference, so
				// it runs the same boots.
				for b := range out[changed].Medians[1] {
					out[changed].Medians[1][b] *= 1 + o.Target
				}
				rep2 := reportOf(out, d, abstat.Options{Threshold: o.Threshold, Alpha: o.Alpha})
				row := rep2.Find(path.Base(rows[changed].pkg), "sec/op", rows[changed].name)
				mu.Lock()
				defer mu.Unlock()
				undecided += rep.Count(abstat.Undecided)
				if flagged > 0 {
					any++
				}
				if row.Verdict != abstat.Undecided {
					decided++
					if row.Verdict == abstat.Worse {
						worse++
					}
				}
			})
			share := float64(any) / float64(draws)
			t.Logf("layout %.2f×within, budget %v: A/A gave a verdict on some row in %d of %d runs (%.1f%%), %.1f of %d rows undecided a run; %s +%.0f%% called worse in %d runs, decided in %d (predicted without a budget %.1f%%)",
				mult, budget, any, draws, 100*share, float64(undecided)/float64(draws), len(rows), rows[changed].name, 100*o.Target, worse, decided, 100*pred)
			// At most 5%, less two binomial standard errors of the draws'
			// share where it is 5%: a share past that would fail at 5%.
			if share > 0.05+2*math.Sqrt(0.05*0.95/float64(draws)) {
				t.Errorf("layout %.2f×within, budget %v: a whole-suite A/A gave a verdict in %.1f%% of runs, want at most 5%%", mult, budget, 100*share)
			}
			// Without a budget the changed row's power, undecided runs
			// counted as misses, is the predicted one within 5 points
			// (three binomial standard errors where more).
			power := float64(worse) / float64(draws)
			if se := math.Sqrt(pred * (1 - pred) / float64(draws)); !budget && math.Abs(power-pred) > max(0.05, 3*se) {
				t.Errorf("layout %.2f×within: +%.0f%% called worse in %.1f%% of runs, predicted %.1f%%", mult, 100*o.Target, 100*power, 100*pred)
			}
		}
	}
}

func d2(o Options) int { return 2 * o.Pilot }

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
