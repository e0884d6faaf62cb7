//go:build linux

package abstat

import (
	"math"
	"slices"
	"strings"

	"golang.org/x/perf/benchfmt"

	"github.com/kbench/kbench/internal/abfile"
	"github.com/kbench/kbench/internal/unit"
)

// Attribution is what a comparison says about the kernel counters each row
// reports per op (package counters, unit.Counters): evidence that explains
// a change, as LKP lists perf-stat and /proc deltas under a result, not a
// verdict. Counter tables are moved out of Report.Tables, so they never
// count among the worse or better rows nor decide the exit status, and
// are listed under their benchmark's row instead.
//
// Counters of events that also happen in the background at a pace of
// their own (context switches, migrations, page faults, softirqs, IPIs)
// grow per op whenever an op takes longer, even when the op itself causes
// none: a getpid loop slowed by seccomp filters sees more timer softirqs
// and switches of other tasks per op. For those, kbcompare also compares
// the counter per second of the row's time (each result's counter/op
// divided by its sec/op) and lists a counter as the op's own change only
// when its rate per second changed too, in the same direction; the others
// are named on a line of their own. Work counters (CPU time, cycles,
// instructions, misses) are per-op work by nature and listed as changed
// whenever they change per op.
type Attribution struct {
	Tables []*Table // the counter units' tables, judged like any other
	Rates  []*Table // derived rates per second of the event counters
	index  map[[4]string]*Row
}

// rateSuffix marks the derived per-second units deriveRates adds.
const rateSuffix = " per s"

// workCounter reports whether a counter unit (as benchfmt tidies it)
// measures the op's own work rather than events that also come at a pace
// of their own.
func workCounter(unit string) bool {
	for _, p := range []string{"cs/", "migrations/", "faults/", "softirq-", "ipi-"} {
		if strings.HasPrefix(unit, p) {
			return false
		}
	}
	return true
}

// deriveRates adds to every result that has sec/op, for each of its
// event counters, that counter per second of the row's time.
func deriveRates(files []*abfile.File) {
	for _, f := range files {
		for i := range f.Results {
			res := &f.Results[i]
			secPerOp := math.NaN()
			for _, v := range res.Values {
				if v.Unit == "sec/op" {
					secPerOp = v.Value
				}
			}
			if !(secPerOp > 0) {
				continue
			}
			var add []benchfmt.Value
			for _, v := range res.Values {
				if unit.IsCounter(v.Unit) && !workCounter(v.Unit) {
					add = append(add, benchfmt.Value{Value: v.Value / secPerOp, Unit: v.Unit + rateSuffix})
				}
			}
			res.Values = append(res.Values, add...)
		}
	}
}

// attribute moves the counter units' tables, and their derived rates,
// out of r.Tables.
func (r *Report) attribute() {
	var head []*Table
	for _, t := range r.Tables {
		switch {
		case strings.HasSuffix(t.Unit, rateSuffix):
			r.Attribution.Rates = append(r.Attribution.Rates, t)
		case unit.IsCounter(t.Unit):
			r.Attribution.Tables = append(r.Attribution.Tables, t)
		default:
			head = append(head, t)
		}
	}
	r.Tables = head
}

// AttrLine is one counter of one benchmark.
type AttrLine struct {
	Unit string
	Row  *Row // per op
	Rate *Row // per second, for event counters; nil for work counters
}

func significant(row *Row) bool { return row != nil && row.Verdict.Moved() }

// own reports whether a changed counter changed as the op's own work:
// a work counter, or an event counter whose rate per second moved the
// same way as its count per op.
func (l AttrLine) own() bool {
	if workCounter(l.Unit) {
		return true
	}
	return significant(l.Rate) && (l.Rate.Change > 0) == (l.Row.Change > 0)
}

// For returns the counters of benchmark name in package pkg (and ident),
// in the order the results reported them, in three groups: changed as the
// op's own work; changed per op only, at an unchanged (or opposite) rate
// per second; and the units compared and found unchanged.
func (a *Attribution) For(pkg, ident, name string) (own, paced []AttrLine, same []string) {
	if a.index == nil {
		a.index = map[[4]string]*Row{}
		for _, t := range slices.Concat(a.Tables, a.Rates) {
			for _, r := range t.Rows {
				a.index[[4]string{t.Pkg, t.Ident, t.Unit, r.Name}] = r
			}
		}
	}
	find := func(unit string) *Row { return a.index[[4]string{pkg, ident, unit, name}] }
	for _, t := range a.Tables {
		row := find(t.Unit)
		if row == nil || t.Pkg != pkg || t.Ident != ident {
			continue
		}
		l := AttrLine{Unit: t.Unit, Row: row}
		if !workCounter(t.Unit) {
			l.Rate = find(t.Unit + rateSuffix)
		}
		switch {
		case !significant(row):
			if row.Old != nil && row.New != nil {
				same = append(same, t.Unit)
			}
		case l.own():
			own = append(own, l)
		default:
			paced = append(paced, l)
		}
	}
	return own, paced, same
}
