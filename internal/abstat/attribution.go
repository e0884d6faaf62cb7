//go:build linux

package abstat

import (
	"slices"
	"strings"

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
	// Rates are the tables the event counters' rates per second are
	// judged in (unit "COUNTER per s"), each rate the Rate of its
	// counter's row; not listed on their own.
	Rates []*Table
}

// rateSuffix names the unit of an event counter's rate per second.
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

// attribute moves the counter units' tables out of r.Tables.
func (r *Report) attribute() {
	var head []*Table
	for _, t := range r.Tables {
		switch {
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
	for _, t := range a.Tables {
		if t.Pkg != pkg || t.Ident != ident {
			continue
		}
		i := slices.IndexFunc(t.Rows, func(row *Row) bool { return row.Name == name })
		if i < 0 {
			continue
		}
		row := t.Rows[i]
		l := AttrLine{Unit: t.Unit, Row: row, Rate: row.Rate}
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
