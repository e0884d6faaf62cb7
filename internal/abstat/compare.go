//go:build linux

package abstat

import (
	"iter"
	"maps"
	"math"
	"path"
	"slices"
	"strings"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"

	"github.com/kbench/kbench/internal/abfile"
	"github.com/kbench/kbench/internal/abmath"
	"github.com/kbench/kbench/internal/unit"
)

// Options are the judgement's knobs.
type Options struct {
	Threshold float64 // smallest relative change called better or worse (0.05)
	// Alpha is the significance level: a row's change is significant
	// when its q (an Evidence row's: its p) is at most Alpha (0.05).
	Alpha float64
	// Design, where set, is a planned run's test of a Primary row
	// (DesignTest), false for a row it holds none of.
	Design func(*Table, *Row) (DesignTest, bool)
	// Target is the change a design planned each row to detect: a row
	// "~" whose mde passes it is underpowered. 0: the threshold.
	Target float64
}

// DefaultOptions are benchstat's alpha and a 5% threshold.
var DefaultOptions = Options{Threshold: 0.05, Alpha: benchmath.DefaultThresholds.CompareAlpha}

// Verdict is a row's judgement.
type Verdict string

const (
	Better  Verdict = "better"
	Worse   Verdict = "worse"
	Same    Verdict = "~"       // not significant, or smaller than the threshold
	Changed Verdict = "changed" // significant, but the unit has no direction
	OldOnly Verdict = "old only"
	NewOnly Verdict = "new only"
	// Failed: go test printed "--- FAIL" for the row on a side, or the
	// row is on one side only and the other side's package failed.
	Failed Verdict = "FAILED"
	// Skipped: the row is on one side only and the other side skipped it.
	Skipped Verdict = "skipped"
	// Underpowered: "~", but the comparison could not have seen a change
	// of the threshold (its minimum detectable effect is larger), so it
	// is no evidence of no change.
	Underpowered Verdict = "underpowered"
	// Undecided: no verdict, in a run with boots as samples, for a row
	// whose boots are too few for its test: fewer than MinBoots a side,
	// or fewer than its design planned (cut short by a budget, out of
	// reach). It is outside the family and cannot fail the comparison;
	// its Power says what its boots could have detected.
	Undecided Verdict = "undecided"
)

// Moved reports whether v is a significant change of at least the
// threshold.
func (v Verdict) Moved() bool { return v == Better || v == Worse || v == Changed }

// Report is the comparison of two result files.
type Report struct {
	Old, New   string
	Opts       Options
	Setup      []SetupDiff // fingerprint and file configuration that differ
	SetupEqual int         // how many are equal
	Tables     []*Table
	// Boots counts each file's boots (distinct kernel.boot_id values;
	// results without one count as one boot). BootMode is set when both
	// have at least MinBoots: rows are then judged with boots as samples.
	Boots    [2]int
	BootMode bool
	// Problems lists failures and skips that the rows alone do not show:
	// failed benchmarks without a row, failed packages. Rows whose
	// verdict is Failed or Skipped are listed with the rows.
	Problems []Outcome
	// Skips are the rows that skipped and have no results on either
	// side (outcomes.go): listed, not failures.
	Skips []*Skip
	// Pulses are, per side, the boots in which protect pulses ran
	// before the results.
	Pulses [2][]abfile.Pulse
	// Attribution holds the kernel counters' tables, out of Tables.
	Attribution Attribution
	// Family is how many rows the q-values correct for (the Primary
	// rows compared on both sides), and Nominal how many of them have
	// p <= Alpha: about Alpha·Family of those come by chance alone.
	Family, Nominal int
	units           benchfmt.UnitMetadataMap
}

// Table holds the rows of one package and unit.
type Table struct {
	Pkg    string // the package's last path element, "seccompbench"
	Path   string // its import path, as the pkg: line
	Ident  string // further configuration that tells rows apart, if any
	Unit   string // benchfmt's tidied unit: sec/op, B/op, loops/s
	Better int    // +1 higher is better, -1 lower is better, 0 unknown
	Rows   []*Row
	// Geomean summarises the rows both sides hold, as benchstat's
	// geomean row; nil with fewer than two such rows.
	Geomean *Geomean
}

// Row compares one benchmark in one unit; Old or New is nil where that
// file has no result for it.
type Row struct {
	Name string
	// Role says whether this unit decides the benchmark's verdict
	// (family.go).
	Role     Role
	Old, New *benchmath.Sample
	OldSum   benchmath.Summary
	NewSum   benchmath.Summary
	// Cmp is benchstat's per-sample comparison (the U-test), where the
	// row is judged per sample; zero with boots as samples.
	Cmp    benchmath.Comparison
	Scale  abmath.Scale // how the row's values are tested (valid when both sides are present)
	Change float64      // new/old - 1
	// P is the two-sided p of the test the row was judged by (Boot's or
	// Cmp's), Q its Benjamini-Hochberg q among the comparison's rows
	// (Primary rows, and Derived ones, which take their Primary's); NaN
	// where there is none.
	P, Q    float64
	Verdict Verdict
	// Notes are the caveats on the row's test, in the order they arose.
	Notes []Note
	// Boot is the comparison with boots as samples, in boot mode.
	Boot *BootCmp
	// Outcome is, for a Failed or Skipped row, what go test printed
	// that failed or skipped it; nil for the others.
	Outcome *Outcome
	// Power is what the comparison could have detected, for the test
	// the verdict used; nil where a side is missing.
	Power *Power
	// Samples holds each side's samples by boot (each file's, in
	// Grouped), nil where absent.
	Samples []*BootSamples
	// ChangeLo and ChangeHi bound Change at abmath.Confidence for that test
	// (test); NaN where a side is missing.
	ChangeLo, ChangeHi float64
	// Rate is, for an event counter (one that also comes at a pace of
	// its own: Attribution), the counter per second of the row's time,
	// each result's counter/op over its sec/op; nil for the others.
	Rate    *Row
	primary *Row // the benchmark's Primary row (itself for one)
	// undecided: its test had too few boots for a verdict (test).
	undecided bool
}

// Primaries yields the rows, each in its Primary unit, with its table,
// in report order.
func (r *Report) Primaries() iter.Seq2[*Table, *Row] {
	return func(yield func(*Table, *Row) bool) {
		for _, t := range r.Tables {
			for _, row := range t.Rows {
				if row.Role == Primary && !yield(t, row) {
					return
				}
			}
		}
	}
}

// Count returns how many rows (benchmarks, each counted once in its
// Primary unit) have verdict v.
func (r *Report) Count(v Verdict) int {
	n := 0
	for _, row := range r.Primaries() {
		if row.Verdict == v {
			n++
		}
	}
	return n
}

// Find returns the row name in unit of package pkg (any package where
// pkg is ""), among the headline and counter tables; nil where none.
func (r *Report) Find(pkg, unit, name string) *Row {
	for _, t := range slices.Concat(r.Tables, r.Attribution.Tables) {
		if t.Unit == unit && (pkg == "" || t.Pkg == pkg) {
			if i := slices.IndexFunc(t.Rows, func(row *Row) bool { return row.Name == name }); i >= 0 {
				return t.Rows[i]
			}
		}
	}
	return nil
}

// Compare reads two result files and compares them.
func Compare(oldPath, newPath string, opts Options) (*Report, error) {
	files, units, err := abfile.Read(oldPath, newPath)
	if err != nil {
		return nil, err
	}
	return compareFiles(files, units, opts), nil
}

// compareFiles compares two files as read.
func compareFiles(files []*abfile.File, units benchfmt.UnitMetadataMap, opts Options) *Report {
	r := &Report{Old: files[0].Path, New: files[1].Path, Opts: opts, units: units}
	for side, f := range files {
		r.Boots[side], r.Pulses[side] = len(f.Boots), f.Pulses
	}
	r.BootMode = r.Boots[0] >= MinBoots && r.Boots[1] >= MinBoots
	r.setup(files)
	r.group(files)
	r.outcomes(files)
	r.attribute()
	r.Judge()
	return r
}

// Grouped is the rows of files as read, grouped into tables with their
// samples by boot and file (Row.Samples[i] is files[i]'s), not judged:
// what a plan reads (package abplan) and a series (package abseries).
func Grouped(files []*abfile.File, units benchfmt.UnitMetadataMap) *Report {
	r := &Report{units: units}
	r.group(files)
	return r
}

// Judge tests every row from its Samples and gives the verdicts: the
// step of Compare after reading and grouping, exported so that a
// simulation can judge rows it drew (sim_test.go). Rows already Failed
// or Skipped keep their verdicts.
func (r *Report) Judge() {
	all := slices.Concat(r.Tables, r.Attribution.Tables, r.Attribution.Rates)
	for _, t := range all {
		for _, row := range t.Rows {
			if row.primary == nil {
				row.Role, row.primary = Primary, row
			}
			r.test(t, row)
		}
	}
	r.family()
	r.powerAtLevel()
	// The verdicts: a headline table's Derived rows last, as they take
	// their Primary's.
	headline := len(r.Tables)
	for _, derived := range []bool{false, true} {
		for i, t := range all {
			for _, row := range t.Rows {
				if derived == (i < headline && row.Role == Derived) {
					row.Verdict = r.verdict(t, row, i < headline)
				}
			}
		}
	}
	for _, t := range r.Tables {
		t.Geomean = geomean(t)
		for _, row := range t.Rows {
			if row.Role == Derived {
				row.Q = row.primary.Q
			}
		}
	}
}

// powerAtLevel computes each Primary row's power at the level its
// verdict is decided at: alpha over the family where the report judges by
// q (a row changed alone has q = p × rows, so p <= alpha/rows is where it
// is called), alpha for a family of one. A design's rows have their design's.
func (r *Report) powerAtLevel() {
	if r.Family < 2 {
		return
	}
	level := r.Opts.Alpha / float64(r.Family)
	for _, row := range r.Primaries() {
		old, new := row.Samples[0], row.Samples[1]
		switch {
		case row.Power == nil || row.Power.Test == "stein":
		case row.Boot != nil:
			row.Power = bootPower(row.Boot, row.Scale, r.goal(), level)
		case row.undecided && row.Outcome == nil:
			if old.Boots() >= 2 && new.Boots() >= 2 {
				b, _, _ := compareBoots(old, new, row.Scale)
				row.Power = bootPower(b, row.Scale, r.goal(), level)
			}
		case row.Old != nil && row.New != nil:
			row.Power = samplePower(row.Old.Values, row.New.Values, row.Scale, r.goal(), level)
		}
	}
}

// goal is the change a row must be able to detect not to be
// underpowered: the design's target, else the threshold.
func (r *Report) goal() float64 {
	if r.Opts.Target > 0 {
		return r.Opts.Target
	}
	return r.Opts.Threshold
}

// test runs a row's test: the design's where it holds the row; with
// boots as samples where both sides hold it in MinBoots boots in boot
// mode; none in boot mode with fewer boots (Undecided: a per-sample test
// there would take a boot's layout for a change); else per sample as
// benchstat does.
func (r *Report) test(t *Table, row *Row) {
	row.undecided = false
	thresholds := &benchmath.Thresholds{CompareAlpha: r.Opts.Alpha}
	assumption := r.units.GetAssumption(t.Unit)
	old, new := row.Samples[0], row.Samples[1]
	if old != nil {
		row.Old = benchmath.NewSample(old.all(), thresholds)
		row.OldSum = assumption.Summary(row.Old, abmath.Confidence)
	}
	if new != nil {
		row.New = benchmath.NewSample(new.all(), thresholds)
		row.NewSum = assumption.Summary(row.New, abmath.Confidence)
	}
	row.P, row.Q, row.ChangeLo, row.ChangeHi = math.NaN(), math.NaN(), math.NaN(), math.NaN()
	switch {
	case old == nil && new == nil:
		return
	case new == nil:
		row.warn(row.OldSum.Warnings)
		return
	case old == nil:
		row.warn(row.NewSum.Warnings)
		return
	}
	row.Scale = abmath.ScaleOf(row.Old.Values, row.New.Values)
	if r.Opts.Design != nil && row.Role == Primary {
		if dt, ok := r.Opts.Design(t, row); ok {
			r.designed(row, dt)
			return
		}
	}
	if r.BootMode && (old.Boots() < MinBoots || new.Boots() < MinBoots) {
		row.undecided = true
		row.note(Note{Kind: TooFewBoots, Boots: [2]int{old.Boots(), new.Boots()}})
		row.Power = &Power{Test: "welch", MDE: math.Inf(1)}
		if old.Boots() >= 2 && new.Boots() >= 2 {
			b, _, _ := compareBoots(old, new, row.Scale)
			row.Power = bootPower(b, row.Scale, r.goal(), r.Opts.Alpha)
			row.Change = change(b.OldCenter, b.NewCenter)
		} else {
			row.Change = change(row.OldSum.Center, row.NewSum.Center)
		}
		return
	}
	sc := row.Scale
	if r.BootMode {
		row.Boot, row.ChangeLo, row.ChangeHi = compareBoots(old, new, sc)
		row.Power = bootPower(row.Boot, sc, r.Opts.Threshold, r.Opts.Alpha)
		row.P = row.Boot.P
		row.Change = change(row.Boot.OldCenter, row.Boot.NewCenter)
		row.spreadNotes()
		return
	}
	row.Cmp = assumption.Compare(row.Old, row.New)
	row.warn(row.OldSum.Warnings, row.NewSum.Warnings, row.Cmp.Warnings)
	row.Power = samplePower(row.Old.Values, row.New.Values, sc, r.Opts.Threshold, r.Opts.Alpha)
	row.P = row.Cmp.P
	row.Change = change(row.OldSum.Center, row.NewSum.Center)
	if all := slices.Concat(row.Old.Values, row.New.Values); flat(all) {
		row.note(Note{Kind: FlatSamples, Values: [2]float64{all[0], all[0]}})
	}
	// The Hodges-Lehmann interval that goes with the U-test; an end is
	// ±Inf where the samples are too few to bound it.
	lx := sc.ToAll(row.Old.Values)
	lo, hi := abmath.ShiftInterval(lx, sc.ToAll(row.New.Values))
	c := abmath.Median(lx)
	row.ChangeLo, row.ChangeHi = sc.Change(lo, c), sc.Change(hi, c)
}

// designed sets a row's test from its design's: Stein's statistic, or
// no verdict where the row lacks its planned boots.
func (r *Report) designed(row *Row, dt DesignTest) {
	old, new := row.Samples[0], row.Samples[1]
	if old.Boots() >= 2 && new.Boots() >= 2 {
		// For the report's centers and spreads; not the test.
		row.Boot, _, _ = compareBoots(old, new, row.Scale)
	}
	row.Power = &Power{Test: "stein", MDE: dt.MDE, Need: dt.Need}
	row.note(Note{Kind: DesignBoots, Rule: dt.Rule, Boots: [2]int{dt.Need, dt.Boots}})
	if !dt.Decided {
		row.undecided = true
		row.note(Note{Kind: DesignUndecided, Why: dt.Why})
		if row.Boot != nil {
			row.Change = change(row.Boot.OldCenter, row.Boot.NewCenter)
		}
		return
	}
	row.P, row.Change, row.ChangeLo, row.ChangeHi = dt.P, dt.Change, dt.Lo, dt.Hi
}

// spreadNotes states where boot medians have no spread, which makes
// Welch's test rest on one side's spread or none.
func (row *Row) spreadNotes() {
	b := row.Boot
	switch o, n := flat(b.Old), flat(b.New); {
	case o && n && b.P == 1:
		row.note(Note{Kind: FlatBootsEqual, Values: [2]float64{b.Old[0], b.New[0]}})
	case o && n:
		row.note(Note{Kind: FlatBoots, Values: [2]float64{b.Old[0], b.New[0]}})
	case o:
		row.note(Note{Kind: FlatBootsOld})
	case n:
		row.note(Note{Kind: FlatBootsNew})
	}
}

// flat reports whether every value of v is v[0].
func flat(v []float64) bool {
	return !slices.ContainsFunc(v, func(x float64) bool { return x != v[0] })
}

// change is new/old - 1: 0 where equal, ±Inf from 0.
func change(o, n float64) float64 {
	switch {
	case o == n:
		return 0
	case o == 0:
		return math.Inf(int(math.Copysign(1, n)))
	}
	return n/o - 1
}

// verdict is a row's verdict, decided here alone: Failed or Skipped by
// its Outcome; old or new only where a side lacks it; undecided where
// its test had too few boots; else from its change and p (q for a
// Primary row): ~, changed, better or worse, and in a
// headline table a ~ that could not have seen the goal is
// underpowered, and a Derived row has its Primary's verdict.
func (r *Report) verdict(t *Table, row *Row, headline bool) Verdict {
	switch {
	case headline && row.Role == Derived:
		return row.primary.Verdict
	case row.Outcome != nil:
		return row.Outcome.Verdict()
	case row.Samples[0] == nil && row.Samples[1] == nil:
		return ""
	case row.Samples[1] == nil:
		return OldOnly
	case row.Samples[0] == nil:
		return NewOnly
	case row.undecided:
		return Undecided
	}
	p := row.P
	if row.Role == Primary {
		p = row.Q
	}
	// benchstat calls a change significant unless p > alpha; an
	// undefined p is no evidence.
	significant := p <= r.Opts.Alpha
	switch {
	case !significant || math.Abs(row.Change) < r.Opts.Threshold || row.Change == 0:
		if headline && row.Power != nil && row.Power.MDE > r.goal() {
			return Underpowered
		}
		return Same
	case t.Better == 0:
		return Changed
	case (row.Change > 0) == (t.Better > 0):
		return Better
	}
	return Worse
}

// group sorts the results into tables by package, other distinguishing
// configuration and unit, and rows by full name, each side's samples
// grouped by boot, and gives each row its Role.
func (r *Report) group(files []*abfile.File) {
	type tableKey struct{ pkg, ident, unit string }
	var identKeys []string
	for _, f := range files {
		for _, k := range slices.Sorted(maps.Keys(f.Config)) {
			if k != "pkg" && !setupKey(files, k) && !slices.Contains(identKeys, k) {
				identKeys = append(identKeys, k)
			}
		}
	}
	slices.Sort(identKeys)
	sides := max(len(files), 2) // a pilot's one file has an empty side
	index := map[tableKey]*Table{}
	rowOf := map[*Table]map[string]*Row{}
	// sample adds a sample of row name to table k (made on first use,
	// with path, into tables) on side, and returns the row and whether
	// it is new.
	sample := func(k tableKey, path string, tables *[]*Table, name string, side int, boot string, v float64, iters int) (*Row, bool) {
		t := index[k]
		if t == nil {
			t = &Table{Pkg: k.pkg, Path: path, Ident: k.ident, Unit: k.unit, Better: r.units.GetBetter(k.unit)}
			index[k] = t
			rowOf[t] = map[string]*Row{}
			*tables = append(*tables, t)
		}
		row, made := rowOf[t][name], false
		if row == nil {
			row, made = &Row{Name: name, Samples: make([]*BootSamples, sides)}, true
			rowOf[t][name] = row
			t.Rows = append(t.Rows, row)
		}
		if row.Samples[side] == nil {
			row.Samples[side] = &BootSamples{}
		}
		row.Samples[side].Add(boot, v, iters)
		return row, made
	}
	benches := map[benchKey]*bench{}
	var order []benchKey
	for side, f := range files {
		for _, res := range f.Results {
			pkg := path.Base(res.Config["pkg"])
			var ident []string
			for _, k := range identKeys {
				ident = append(ident, k+"="+res.Config[k])
			}
			bk := benchKey{pkg, strings.Join(ident, " "), res.Name}
			secOp := math.NaN()
			for _, v := range res.Values {
				if v.Unit == "sec/op" {
					secOp = v.Value
				}
			}
			b := benches[bk]
			if b == nil {
				b = &bench{rows: map[string]*Row{}, products: map[string][][]float64{}, sides: sides}
				benches[bk] = b
				order = append(order, bk)
			}
			for _, v := range res.Values {
				k := tableKey{bk.pkg, bk.ident, v.Unit}
				row, made := sample(k, res.Config["pkg"], &r.Tables, res.Name, side, res.Boot, v.Value, res.Iters)
				if made {
					b.units = append(b.units, v.Unit)
					b.rows[v.Unit] = row
				}
				if secOp > 0 && unit.IsCounter(v.Unit) && !workCounter(v.Unit) {
					// Its table's path, whichever result made it.
					k.unit += rateSuffix
					rate, made := sample(k, index[tableKey{bk.pkg, bk.ident, v.Unit}].Path, &r.Attribution.Rates, res.Name, side, res.Boot, v.Value/secOp, res.Iters)
					if made {
						rate.Role, rate.primary, row.Rate = Evidence, rate, rate
					}
				}
			}
			b.addProducts(side, res.Values)
		}
	}
	for _, bk := range order {
		benches[bk].roles()
	}
}

// setupKey reports whether a configuration key describes the setup (one
// value throughout each file in which it appears) rather than telling
// benchmarks apart. pkg always tells them apart.
func setupKey(files []*abfile.File, key string) bool {
	if key == "pkg" {
		return false
	}
	for _, f := range files {
		if f.Config[key] != nil && !f.SingleValued(key) {
			return false
		}
	}
	return true
}

// warn notes benchmath's warnings, each once.
func (row *Row) warn(lists ...[]error) {
	for _, l := range lists {
		for _, e := range l {
			if !slices.ContainsFunc(row.Notes, func(n Note) bool { return n.Kind == Library && n.Err.Error() == e.Error() }) {
				row.note(Note{Kind: Library, Err: e})
			}
		}
	}
}

func (row *Row) note(n Note) { row.Notes = append(row.Notes, n) }

// DesignTest is a row's test under a design (Options.Design): a planned
// run fixed each row's test before its boots ran (package abplan:
// Stein's two-stage test of kbab -target), so that the test is the
// design's and not Welch's of all the boots, which would inflate t
// where a spread that looked small chose few boots.
type DesignTest struct {
	// Rule names the test ("Stein's two-stage t-test").
	Rule string
	// Decided says the row holds the boots its design planned; a row
	// that does not gets no verdict (Undecided), stays out of the
	// family, and cannot fail the comparison.
	Decided bool
	// P is the test's two-sided p, Change the row's change and Lo, Hi
	// its interval at abmath.Confidence (where Decided).
	P, Change, Lo, Hi float64
	// MDE is the change the row's boots detect at the design's power
	// and level; Boots the boots a side it used or holds, Need those it
	// planned.
	MDE         float64
	Boots, Need int
	// Why says why a row is undecided.
	Why string
}
