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
)

// Report is the comparison of two result files.
type Report struct {
	Old, New   string
	Opts       Options
	Setup      []SetupDiff // fingerprint and file configuration that differ
	SetupEqual int         // how many are equal
	Tables     []*Table
	// Attribution holds the kernel counters' tables, out of Tables.
	Attribution Attribution
}

// SetupDiff is one setup line that differs; "" where a file lacks it.
type SetupDiff struct{ Key, Old, New string }

// Table holds the rows of one package and unit.
type Table struct {
	Pkg    string // the package's last path element, "seccompbench"
	Ident  string // further configuration that tells rows apart, if any
	Unit   string // benchfmt's tidied unit: sec/op, B/op, loops/s
	Better int    // +1 higher is better, -1 lower is better, 0 unknown
	Rows   []*Row
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
			if row.Old != nil && row.New != nil && len(row.Cmp.Warnings) > 0 {
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
	rep.setup(ins)
	deriveRates(ins)
	rep.tables(ins, units)
	rep.attribute()
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
	type cell struct{ values [2][]float64 }
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
			}
		}
	}
	thresholds := &benchmath.Thresholds{CompareAlpha: r.Opts.Alpha}
	for _, t := range r.Tables {
		assumption := units.GetAssumption(t.Unit)
		for _, row := range t.Rows {
			c := cells[t][row.Name]
			if v := c.values[0]; v != nil {
				row.Old = benchmath.NewSample(v, thresholds)
				row.OldSum = assumption.Summary(row.Old, confidence)
			}
			if v := c.values[1]; v != nil {
				row.New = benchmath.NewSample(v, thresholds)
				row.NewSum = assumption.Summary(row.New, confidence)
			}
			r.judge(t, row, assumption)
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
	o, n := row.OldSum.Center, row.NewSum.Center
	switch {
	case o == n:
		row.Change = 0
	case o == 0:
		row.Change = math.Inf(int(math.Copysign(1, n)))
	default:
		row.Change = n/o - 1
	}
	// benchstat calls a change significant unless p > alpha.
	significant := !(row.Cmp.P > row.Cmp.Alpha)
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
