//go:build linux

package main

import (
	"fmt"
	"maps"
	"math"
	"path"
	"slices"
	"strings"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"
)

// Options are the judgement's knobs.
type Options struct {
	Threshold float64 // smallest relative change called better or worse (0.05)
	Alpha     float64 // significance level of the U-test (0.05)
}

// confidence is benchstat's default confidence level for the ranges.
const confidence = 0.95

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
)

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
	Problems []Problem
	// Pulses notes, per side, boots in which protect pulses ran before
	// the results.
	Pulses [2][]string
	// Attribution holds the kernel counters' tables, out of Tables.
	Attribution Attribution
}

// Problem is a failure or skip, on a side ("old" or "new").
type Problem struct {
	Side string `json:"side"`
	Pkg  string `json:"package"`
	Name string `json:"name"`
	What string `json:"what"`
}

// SetupDiff is one setup line that differs; "" where a file lacks it.
type SetupDiff struct {
	Key string `json:"key"`
	Old string `json:"old"`
	New string `json:"new"`
}

// Table holds the rows of one package and unit.
type Table struct {
	Pkg    string // the package's last path element, "seccompbench"
	Ident  string // further configuration that tells rows apart, if any
	Unit   string // benchfmt's tidied unit: sec/op, B/op, loops/s
	Better int    // +1 higher is better, -1 lower is better, 0 unknown
	Rows   []*Row
	// Geomean summarises the rows both sides hold, as benchstat's
	// geomean row; nil with fewer than two such rows.
	Geomean *Geomean
}

// Geomean is the geometric mean of a table's centers on each side, over
// the rows compared on both (and with positive centers), and its change.
type Geomean struct {
	Old, New, Change float64
	Rows             int
}

// Row compares one benchmark in one unit; Old or New is nil where that
// file has no result for it.
type Row struct {
	Name     string
	Old, New *benchmath.Sample
	OldSum   benchmath.Summary
	NewSum   benchmath.Summary
	Cmp      benchmath.Comparison // valid when both sides are present
	Change   float64              // new/old - 1
	Verdict  Verdict
	Warnings []string
	// Boot is the comparison with boots as samples, in boot mode; Cmp and
	// the summaries are then per sample, for reference.
	Boot *BootCmp
	// Why says, for a Failed or Skipped row, what go test printed.
	Why string
	// Power is what the comparison could have detected, for the test
	// the verdict used; nil where a side is missing.
	Power *Power
	// bootsOf holds each side's samples by boot, nil where absent.
	bootsOf [2]*bootSamples
	// ChangeLo and ChangeHi bound Change at 95% confidence for that test
	// (changeInterval); NaN where a side is missing.
	ChangeLo, ChangeHi float64
}

// Count returns how many rows have verdict v.
func (r *Report) Count(v Verdict) int {
	n := 0
	for _, t := range r.Tables {
		for _, row := range t.Rows {
			if row.Verdict == v {
				n++
			}
		}
	}
	return n
}

// undecidable counts the compared rows whose samples are too small for
// the U-test ever to reach alpha (benchmath warns about them).
func (r *Report) undecidable() int {
	n := 0
	for _, t := range r.Tables {
		for _, row := range t.Rows {
			if row.Old != nil && row.New != nil && row.Boot == nil && len(row.Cmp.Warnings) > 0 {
				n++
			}
		}
	}
	return n
}

// Compare reads two result files and compares them.
func Compare(oldPath, newPath string, opts Options) (*Report, error) {
	ins, units, err := readInputs(oldPath, newPath)
	if err != nil {
		return nil, err
	}
	rep := &Report{Old: oldPath, New: newPath, Opts: opts}
	for side, in := range ins {
		rep.Boots[side] = len(in.boots)
		for _, p := range in.lines.pulses {
			rep.Pulses[side] = append(rep.Pulses[side], fmt.Sprintf("boot %s: %s", shortBoot(p.boot), p.name))
		}
	}
	rep.BootMode = rep.Boots[0] >= MinBoots && rep.Boots[1] >= MinBoots
	rep.setup(ins)
	deriveRates(ins)
	rep.tables(ins, units)
	rep.outcomes(ins)
	rep.attribute()
	rep.underpowered()
	for _, t := range rep.Tables {
		t.Geomean = geomean(t)
		for _, row := range t.Rows {
			row.ChangeLo, row.ChangeHi = changeInterval(row)
		}
	}
	return rep, nil
}

// setup lists the fingerprint lines, then the configuration keys that
// hold one value throughout each file, that differ between the files.
func (r *Report) setup(ins [2]*input) {
	type pair struct{ old, new string }
	var keys []string
	vals := map[string]*pair{}
	add := func(key string, side int, v string) {
		p := vals[key]
		if p == nil {
			p = &pair{}
			vals[key] = p
			keys = append(keys, key)
		}
		if side == 0 {
			p.old = v
		} else {
			p.new = v
		}
	}
	for side, in := range ins {
		for _, f := range in.fields {
			add(f.Key, side, f.Value)
		}
	}
	for side, in := range ins {
		for _, k := range configKeys(in) {
			if setupKey(ins, k) {
				add(k, side, in.config[k].values[0])
			}
		}
	}
	for _, k := range keys {
		if p := vals[k]; p.old == p.new {
			r.SetupEqual++
		} else {
			r.Setup = append(r.Setup, SetupDiff{k, p.old, p.new})
		}
	}
}

// configKeys lists the file configuration keys of in, sorted.
func configKeys(in *input) []string {
	return slices.Sorted(maps.Keys(in.config))
}

// setupKey reports whether a configuration key describes the setup (one
// value throughout each file in which it appears) rather than telling
// benchmarks apart. pkg always tells them apart.
func setupKey(ins [2]*input, key string) bool {
	if key == "pkg" {
		return false
	}
	for _, in := range ins {
		if in.config[key] != nil && !in.singleValued(key) {
			return false
		}
	}
	return true
}

// tables groups the results by package, other distinguishing
// configuration, full name and unit, and compares each group.
func (r *Report) tables(ins [2]*input, units benchfmt.UnitMetadataMap) {
	type tableKey struct{ pkg, ident, unit string }
	type cell struct {
		values [2][]float64
		boots  [2]bootSamples
	}
	var identKeys []string
	for _, in := range ins {
		for _, k := range configKeys(in) {
			if k != "pkg" && !setupKey(ins, k) && !slices.Contains(identKeys, k) {
				identKeys = append(identKeys, k)
			}
		}
	}
	slices.Sort(identKeys)
	index := map[tableKey]*Table{}
	cells := map[*Table]map[string]*cell{}
	for side, in := range ins {
		for _, res := range in.results {
			pkg := path.Base(res.config["pkg"])
			var ident []string
			for _, k := range identKeys {
				ident = append(ident, k+"="+res.config[k])
			}
			for _, v := range res.values {
				k := tableKey{pkg, strings.Join(ident, " "), v.Unit}
				t := index[k]
				if t == nil {
					t = &Table{Pkg: pkg, Ident: k.ident, Unit: v.Unit, Better: units.GetBetter(v.Unit)}
					index[k] = t
					cells[t] = map[string]*cell{}
					r.Tables = append(r.Tables, t)
				}
				c := cells[t][res.name]
				if c == nil {
					c = &cell{}
					cells[t][res.name] = c
					t.Rows = append(t.Rows, &Row{Name: res.name})
				}
				c.values[side] = append(c.values[side], v.Value)
				c.boots[side].add(res.boot, v.Value)
			}
		}
	}
	thresholds := &benchmath.Thresholds{CompareAlpha: r.Opts.Alpha}
	for _, t := range r.Tables {
		assumption := units.GetAssumption(t.Unit)
		for _, row := range t.Rows {
			c := cells[t][row.Name]
			for side := range c.boots {
				if c.values[side] != nil {
					row.bootsOf[side] = &c.boots[side]
				}
			}
			if v := c.values[0]; v != nil {
				row.Old = benchmath.NewSample(v, thresholds)
				row.OldSum = assumption.Summary(row.Old, confidence)
			}
			if v := c.values[1]; v != nil {
				row.New = benchmath.NewSample(v, thresholds)
				row.NewSum = assumption.Summary(row.New, confidence)
			}
			r.judge(t, row, assumption)
			if r.BootMode && row.Old != nil && row.New != nil {
				r.judgeBoots(t, row, &c.boots[0], &c.boots[1])
			}
		}
	}
}

// judge compares a row's samples, as benchstat does, and gives the verdict.
func (r *Report) judge(t *Table, row *Row, assumption benchmath.Assumption) {
	switch {
	case row.New == nil:
		row.Verdict = OldOnly
		row.warn(row.OldSum.Warnings)
		return
	case row.Old == nil:
		row.Verdict = NewOnly
		row.warn(row.NewSum.Warnings)
		return
	}
	row.Cmp = assumption.Compare(row.Old, row.New)
	row.warn(row.OldSum.Warnings, row.NewSum.Warnings, row.Cmp.Warnings)
	row.Power = samplePower(row.Old.Values, row.New.Values, r.Opts.Threshold, r.Opts.Alpha)
	r.decide(t, row, row.OldSum.Center, row.NewSum.Center, row.Cmp.P)
}

// decide sets a compared row's change, from its two centers, and its
// verdict, from the change and the p-value.
func (r *Report) decide(t *Table, row *Row, o, n, p float64) {
	switch {
	case o == n:
		row.Change = 0
	case o == 0:
		row.Change = math.Inf(int(math.Copysign(1, n)))
	default:
		row.Change = n/o - 1
	}
	// benchstat calls a change significant unless p > alpha.
	significant := !(p > r.Opts.Alpha)
	switch {
	case !significant || math.Abs(row.Change) < r.Opts.Threshold || row.Change == 0:
		row.Verdict = Same
	case t.Better == 0:
		row.Verdict = Changed
	case (row.Change > 0) == (t.Better > 0):
		row.Verdict = Better
	default:
		row.Verdict = Worse
	}
}

// judgeBoots gives the verdict with boots as the samples, where both
// sides hold the row in at least MinBoots boots.
func (r *Report) judgeBoots(t *Table, row *Row, old, new *bootSamples) {
	if len(old.order) < MinBoots || len(new.order) < MinBoots {
		row.Warnings = append(row.Warnings, fmt.Sprintf(
			"only %d+%d boots hold this row (need %d each): per-sample statistics, which a layout shift between boots can fool",
			len(old.order), len(new.order), MinBoots))
		return
	}
	row.Boot = compareBoots(old, new)
	// The per-sample summaries' warnings (too few samples for a range)
	// are about statistics this row no longer uses.
	row.Warnings = nil
	row.Power = bootPower(row.Boot, r.Opts.Threshold, r.Opts.Alpha)
	r.decide(t, row, row.Boot.OldCenter, row.Boot.NewCenter, row.Boot.P)
}

// centers returns a compared row's two centers: of the boot medians in
// boot mode, the medians otherwise.
func (row *Row) centers() (old, new float64) {
	if row.Boot != nil {
		return row.Boot.OldCenter, row.Boot.NewCenter
	}
	return row.OldSum.Center, row.NewSum.Center
}

// geomean summarises t's rows that both sides hold and neither failed.
func geomean(t *Table) *Geomean {
	var lo, ln float64
	n := 0
	for _, row := range t.Rows {
		if row.Old == nil || row.New == nil || row.Verdict == Failed || row.Verdict == Skipped {
			continue
		}
		o, nw := row.centers()
		if !(o > 0 && nw > 0) {
			continue
		}
		lo, ln = lo+math.Log(o), ln+math.Log(nw)
		n++
	}
	if n < 2 {
		return nil
	}
	g := &Geomean{Old: math.Exp(lo / float64(n)), New: math.Exp(ln / float64(n)), Rows: n}
	g.Change = g.New/g.Old - 1
	return g
}

// underpowered marks the "~" rows of the headline tables (the counters
// are evidence, not verdicts) that could not have seen the threshold.
func (r *Report) underpowered() {
	for _, t := range r.Tables {
		for _, row := range t.Rows {
			if row.Verdict == Same && row.Power.Underpowered(r.Opts.Threshold) {
				row.Verdict = Underpowered
			}
		}
	}
}

// outcomes marks the rows that failed, or that one side lacks because it
// failed or skipped them there, and lists the failures no row shows.
func (r *Report) outcomes(ins [2]*input) {
	sides := [2]string{"old", "new"}
	for side, in := range ins {
		failed := leaves(in.lines.failed)
		for _, o := range failed {
			found := false
			for _, t := range r.Tables {
				for _, row := range t.Rows {
					if t.Pkg == o.pkg && sameBenchmark(o.name, row.Name) {
						found = true
						row.fail(Failed, fmt.Sprintf("--- FAIL in %s (%s:%d)", sides[side], in.path, o.line))
					}
				}
			}
			if !found {
				r.Problems = append(r.Problems, Problem{sides[side], o.pkg, o.name, fmt.Sprintf("--- FAIL, no results (%s:%d)", in.path, o.line)})
			}
		}
		for _, o := range in.lines.pkgFail {
			r.Problems = append(r.Problems, Problem{sides[side], o.pkg, o.name, fmt.Sprintf("the test binary failed (%s:%d)", in.path, o.line)})
		}
		// A row the other side has and this side lacks: did this side
		// skip it, or did its package fail?
		lacks := NewOnly
		if side == 1 {
			lacks = OldOnly
		}
		for _, t := range r.Tables {
			for _, row := range t.Rows {
				if row.Verdict != lacks {
					continue
				}
				for _, o := range in.lines.skipped {
					if t.Pkg == o.pkg && sameBenchmark(o.name, row.Name) {
						row.fail(Skipped, fmt.Sprintf("--- SKIP in %s (%s:%d)", sides[side], in.path, o.line))
					}
				}
				for _, o := range in.lines.pkgFail {
					if t.Pkg == o.pkg {
						row.fail(Failed, fmt.Sprintf("missing from %s, whose test binary failed (%s:%d)", sides[side], in.path, o.line))
					}
				}
			}
		}
	}
}

// fail sets a Failed or Skipped verdict; Failed wins over Skipped.
func (row *Row) fail(v Verdict, why string) {
	if row.Verdict == Failed && v == Skipped {
		return
	}
	if row.Verdict != v {
		row.Why = why
	}
	row.Verdict = v
}

// Failures counts the rows and problems that make a comparison fail
// whatever the statistics say.
func (r *Report) Failures() int {
	return r.Count(Failed) + r.Count(Skipped) + len(r.Problems)
}

// shortBoot abbreviates a boot id for a header.
func shortBoot(b string) string {
	if b == "" {
		return "(no boot id)"
	}
	if len(b) > 8 {
		return b[:8]
	}
	return b
}

func (row *Row) warn(lists ...[]error) {
	for _, l := range lists {
		for _, e := range l {
			if s := e.Error(); !slices.Contains(row.Warnings, s) {
				row.Warnings = append(row.Warnings, s)
			}
		}
	}
}

// direction describes a table's unit for a header.
func (t *Table) direction() string {
	switch t.Better {
	case 1:
		return "higher is better"
	case -1:
		return "lower is better"
	}
	return fmt.Sprintf("direction unknown: no `Unit %s better=...` line", t.Unit)
}
