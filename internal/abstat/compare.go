//go:build linux

package abstat

import (
	"cmp"
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

// Options are the judgement's knobs: the smallest relative change
// called better or worse (Threshold), the level a row's q (an Evidence
// row's p) must reach (Alpha), a planned run's test of a Primary row
// (Design, false for a row it holds none of) and the change it planned
// each row to detect (Target; 0: the threshold), past which the mde of
// a "~" row makes it underpowered.
type Options struct {
	Threshold, Alpha float64
	Design           func(*Table, *Row) (DesignTest, bool)
	Target           float64
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
	// Failed: go test printed "--- FAIL" for the row on a side, or its
	// package failed on the side that lacks it; Skipped: the side that
	// lacks it skipped it.
	Failed  Verdict = "FAILED"
	Skipped Verdict = "skipped"
	// Underpowered: "~", but its mde is larger than the goal (goal).
	Underpowered Verdict = "underpowered"
	// Undecided: no verdict, with boots as samples, for a row whose
	// boots are fewer than MinBoots a side or than its design planned;
	// outside the family, no failure.
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
	// Boots counts each file's boots; BootMode is set when both have
	// MinBoots: rows are then judged with boots as samples.
	Boots    [2]int
	BootMode bool
	// Problems are the failures no row shows (failed benchmarks without
	// a row, failed packages), Skips the rows skipped with no results on
	// either side (listed, not failures).
	Problems []Outcome
	Skips    []*Skip
	// Pulses are, per side, the boots in which protect pulses ran
	// before the results.
	Pulses      [2][]abfile.Pulse
	Attribution Attribution // the kernel counters' tables, out of Tables
	// Family is how many rows the q-values correct for, and Nominal how
	// many of them have p <= Alpha.
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
	// Geomean is benchstat's geomean row; nil with fewer than two rows.
	Geomean *Geomean
}

// Row compares one benchmark in one unit.
type Row struct {
	Name string
	Role Role // whether this unit decides the benchmark's verdict
	// Samples holds each side's (each file's, in Grouped) samples by
	// boot, nil where absent.
	Samples []*BootSamples
	Sides   [2]*Side     // as the row's test sees them, nil where absent
	Scale   abmath.Scale // how the row's values are tested (with both sides)
	// Test names P's test: "welch" (boots as samples, a design's rows
	// too), "utest" (per sample), "" (a side is missing).
	Test   string
	Change float64 // new/old - 1
	// ChangeLo and ChangeHi bound Change at abmath.Confidence; NaN
	// where a side is missing.
	ChangeLo, ChangeHi float64
	// P is the two-sided p of the row's test (a design's where it has
	// one), Q its Benjamini-Hochberg q (a Derived row's its Primary's);
	// NaN where there is none.
	P, Q float64
	// Within and Between are the spreads, on the Scale, of samples
	// within a boot and of boot medians (bootCmp's); NaN but for Test
	// "welch". TooFew: per sample, too few samples to reach alpha.
	Within, Between float64
	TooFew          bool
	Verdict         Verdict
	Notes           []Note // caveats on the row's test, in order
	// Outcome is what go test printed that failed or skipped the row.
	Outcome *Outcome
	// Power is what the row's test could have detected; nil per sample
	// or where a side is missing.
	Power *Power
	// Rate is, for an event counter (Attribution), the counter per
	// second of the row's time; nil for the others.
	Rate      *Row
	primary   *Row     // the benchmark's Primary row (itself for one)
	boot      *bootCmp // the comparison with boots as samples (Test "welch")
	undecided bool     // its test had too few boots for a verdict
}

// Side is one side of a compared row: the center of its samples with
// its interval at abmath.Confidence, and its N samples in Boots boots.
// Per sample the center is benchmath's (the median); with boots as
// samples it is the mean of the boot medians on the row's Scale (a
// geometric mean with logs), with its t interval (NaN for one boot).
type Side struct {
	Center, Lo, Hi float64
	N, Boots       int
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

// Find returns the row name in unit of package pkg (any where ""),
// among the headline and counter tables; nil where none.
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
// samples by boot and file, not judged: what a plan and a series read.
func Grouped(files []*abfile.File, units benchfmt.UnitMetadataMap) *Report {
	r := &Report{units: units}
	r.group(files)
	return r
}

// Judge tests every row from its Samples and gives the verdicts: the
// step of Compare after grouping, which the simulations call on rows
// they drew.
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
	for i, t := range all {
		for _, row := range t.Rows {
			row.Verdict = r.verdict(t, row, i < len(r.Tables))
		}
	}
	// A Derived row (headline tables only) shows its Primary's.
	for _, t := range r.Tables {
		for _, row := range t.Rows {
			if row.Role == Derived {
				row.Verdict, row.Q = row.primary.Verdict, row.primary.Q
			}
		}
		t.Geomean = geomean(t)
	}
}

// powerAtLevel computes each Primary row's power at the level its
// verdict is decided at: alpha over the family (a row changed alone has
// q = p × rows), alpha for a family of one; a design's rows keep theirs.
func (r *Report) powerAtLevel() {
	if r.Family < 2 {
		return
	}
	level := r.Opts.Alpha / float64(r.Family)
	for _, row := range r.Primaries() {
		old, new := row.Samples[0], row.Samples[1]
		switch {
		case row.Power == nil || row.Power.Test == "stein":
		case row.boot != nil:
			row.Power = bootPower(row.boot, row.Scale, r.goal(), level)
		case row.undecided && row.Outcome == nil && old.Boots() >= 2 && new.Boots() >= 2:
			b, _, _ := compareBoots(old, new, row.Scale)
			row.Power = bootPower(b, row.Scale, r.goal(), level)
		}
	}
}

// goal is the change a row must be able to detect not to be
// underpowered: the design's target, else the threshold.
func (r *Report) goal() float64 { return cmp.Or(max(r.Opts.Target, 0), r.Opts.Threshold) }

// test runs a row's test: the design's where it holds the row; in boot
// mode, with boots as samples, none where a side has fewer than
// MinBoots (a per-sample test would take a boot's layout for a
// change); else per sample as benchstat does.
func (r *Report) test(t *Table, row *Row) {
	nan := math.NaN()
	row.P, row.Q, row.ChangeLo, row.ChangeHi, row.Within, row.Between = nan, nan, nan, nan, nan, nan
	thresholds := &benchmath.Thresholds{CompareAlpha: r.Opts.Alpha}
	assumption := r.units.GetAssumption(t.Unit)
	var samples [2]*benchmath.Sample
	var sums [2]benchmath.Summary
	for i, bs := range row.Samples[:2] {
		if bs != nil {
			samples[i] = benchmath.NewSample(bs.all(), thresholds)
			sums[i] = assumption.Summary(samples[i], abmath.Confidence)
			row.Sides[i] = &Side{sums[i].Center, sums[i].Lo, sums[i].Hi, len(samples[i].Values), bs.Boots()}
		}
	}
	old, new := row.Samples[0], row.Samples[1]
	if old == nil || new == nil {
		row.warn(sums[0].Warnings, sums[1].Warnings) // a missing side's are none
		return
	}
	row.Test = "utest"
	row.Scale = abmath.ScaleOf(samples[0].Values, samples[1].Values)
	if r.Opts.Design != nil && row.Role == Primary {
		if dt, ok := r.Opts.Design(t, row); ok {
			r.designed(row, dt)
			return
		}
	}
	row.Change = change(row.Sides[0].Center, row.Sides[1].Center)
	sc := row.Scale
	if r.BootMode && (old.Boots() < MinBoots || new.Boots() < MinBoots) {
		row.undecided = true
		row.note(Note{Kind: TooFewBoots, Boots: [2]int{old.Boots(), new.Boots()}})
		row.Power = &Power{Test: "welch", MDE: math.Inf(1)}
		if old.Boots() >= 2 && new.Boots() >= 2 {
			b, _, _ := compareBoots(old, new, sc)
			row.Power = bootPower(b, sc, r.goal(), r.Opts.Alpha)
			row.Change = change(b.sides[0].Center, b.sides[1].Center)
		}
		return
	}
	if r.BootMode {
		var b *bootCmp
		b, row.ChangeLo, row.ChangeHi = compareBoots(old, new, sc)
		row.setBoot(b)
		row.Power = bootPower(b, sc, r.Opts.Threshold, r.Opts.Alpha)
		row.P = b.p
		row.spreadNotes()
		return
	}
	c := assumption.Compare(samples[0], samples[1])
	row.warn(sums[0].Warnings, sums[1].Warnings, c.Warnings)
	row.TooFew = len(c.Warnings) > 0
	row.P = c.P
	if all := slices.Concat(samples[0].Values, samples[1].Values); flat(all) {
		row.note(Note{Kind: FlatSamples, Values: [2]float64{all[0], all[0]}})
	}
	// The Hodges-Lehmann interval that goes with the U-test.
	lx := sc.ToAll(samples[0].Values)
	lo, hi := abmath.ShiftInterval(lx, sc.ToAll(samples[1].Values))
	c0 := abmath.Median(lx)
	row.ChangeLo, row.ChangeHi = sc.Change(lo, c0), sc.Change(hi, c0)
}

// setBoot makes b the row's comparison: its sides, change, spreads and
// test.
func (row *Row) setBoot(b *bootCmp) {
	row.boot, row.Test, row.Within, row.Between = b, "welch", b.within, b.between
	row.Sides[0], row.Sides[1] = b.sides[0], b.sides[1]
	row.Change = change(b.sides[0].Center, b.sides[1].Center)
}

// designed sets a row's test from its design's: Stein's statistic, or
// no verdict where the row lacks its planned boots.
func (r *Report) designed(row *Row, dt DesignTest) {
	old, new := row.Samples[0], row.Samples[1]
	if old.Boots() >= 2 && new.Boots() >= 2 {
		// For the report's centers and spreads; not the test.
		b, _, _ := compareBoots(old, new, row.Scale)
		row.setBoot(b)
	}
	row.Power = &Power{Test: "stein", MDE: dt.MDE, Need: dt.Need}
	row.note(Note{Kind: DesignBoots, Rule: dt.Rule, Boots: [2]int{dt.Need, dt.Boots}})
	if !dt.Decided {
		row.undecided = true
		row.note(Note{Kind: DesignUndecided, Why: dt.Why})
		return
	}
	row.P, row.Change, row.ChangeLo, row.ChangeHi = dt.P, dt.Change, dt.Lo, dt.Hi
}

// spreadNotes states where a side's boot medians have no spread.
func (row *Row) spreadNotes() {
	o, n := row.boot.med[0], row.boot.med[1]
	switch fo, fn := flat(o), flat(n); {
	case fo && fn && row.P == 1:
		row.note(Note{Kind: FlatBootsEqual, Values: [2]float64{o[0], n[0]}})
	case fo && fn:
		row.note(Note{Kind: FlatBoots, Values: [2]float64{o[0], n[0]}})
	case fo:
		row.note(Note{Kind: FlatBootsOld})
	case fn:
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

// verdict is a row's verdict, decided here alone, from its outcome, its
// sides, its boots and its change and p (q for a Primary row); in a
// headline table a Derived row then takes its Primary's (Judge).
func (r *Report) verdict(t *Table, row *Row, headline bool) Verdict {
	switch {
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
	significant := p <= r.Opts.Alpha // as benchstat; a NaN p is none
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
// configuration and unit, and rows by full name, each side's samples by
// boot, and gives each row its Role.
func (r *Report) group(files []*abfile.File) {
	type tableKey struct{ pkg, ident, unit string }
	idents := map[string]bool{}
	for _, f := range files {
		for k := range f.Config {
			if k != "pkg" && !setupKey(files, k) {
				idents[k] = true
			}
		}
	}
	identKeys := slices.Sorted(maps.Keys(idents))
	sides := max(len(files), 2) // a pilot's one file has an empty side
	index := map[tableKey]*Table{}
	rowOf := map[*Table]map[string]*Row{}
	// sample adds a sample of row name to table k (made on first use,
	// into tables) on side, and returns the row and whether it is new.
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
	type bench struct {
		rows  []*Row
		units []string // the rows' units
	}
	benches := map[[3]string]*bench{} // by package, ident and name
	for side, f := range files {
		for _, res := range f.Results {
			pkg := path.Base(res.Config["pkg"])
			var ident []string
			for _, k := range identKeys {
				ident = append(ident, k+"="+res.Config[k])
			}
			bk := [3]string{pkg, strings.Join(ident, " "), res.Name}
			secOp := math.NaN()
			for _, v := range res.Values {
				if v.Unit == "sec/op" {
					secOp = v.Value
				}
			}
			b := benches[bk]
			if b == nil {
				b = &bench{}
				benches[bk] = b
			}
			for _, v := range res.Values {
				k := tableKey{bk[0], bk[1], v.Unit}
				row, made := sample(k, res.Config["pkg"], &r.Tables, res.Name, side, res.Boot, v.Value, res.Iters)
				if made {
					b.rows, b.units = append(b.rows, row), append(b.units, v.Unit)
				}
				if secOp > 0 && unit.IsCounter(v.Unit) && !workCounter(v.Unit) {
					// Its table's path, whichever result made it.
					k.unit += rateSuffix
					rate, made := sample(k, index[tableKey{bk[0], bk[1], v.Unit}].Path, &r.Attribution.Rates, res.Name, side, res.Boot, v.Value/secOp, res.Iters)
					if made {
						rate.Role, rate.primary, row.Rate = Evidence, rate, rate
					}
				}
			}
		}
	}
	for _, b := range benches {
		roles(b.rows, b.units)
	}
}

// setupKey reports whether a configuration key describes the setup (one
// value throughout each file that has it) rather than telling rows
// apart, as pkg always does.
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

// DesignTest is a row's test under a design (Options.Design), fixed
// before its boots ran (Stein's of kbab -target), not Welch's of all the
// boots, which would inflate t where a small spread chose few boots.
// Decided says the row holds the boots planned (else it is Undecided,
// Why); P, Change and its interval Lo, Hi are the test's where it is,
// MDE the change its boots detect, Boots those a side it used or holds,
// Need those planned.
type DesignTest struct {
	Rule              string // the test's name
	Decided           bool
	P, Change, Lo, Hi float64
	MDE               float64
	Boots, Need       int
	Why               string
}
