//go:build linux

package abstat

import (
	"slices"
	"strings"

	"github.com/kbench/kbench/internal/unit"
)

// Attribution is what a comparison says about the kernel counters each
// row reports per op: evidence under the row, never a verdict. An event
// counter (switches, faults, softirqs, IPIs) also comes at a pace of its
// own, so it is the op's own change only where its rate per second
// moved the same way (docs/counters.md); a work counter always is.
type Attribution struct {
	Tables []*Table // the counter units' tables, judged like any other
	// Rates are the event counters' rates per second (unit "COUNTER per
	// s"), each the Rate of its counter's row.
	Rates []*Table
}

// rateSuffix names the unit of an event counter's rate per second.
const rateSuffix = " per s"

// workCounter reports whether a counter unit measures the op's own work
// rather than events that also come at a pace of their own.
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
		if unit.IsCounter(t.Unit) {
			r.Attribution.Tables = append(r.Attribution.Tables, t)
		} else {
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

// own reports whether a changed counter changed as the op's own work.
func (l AttrLine) own() bool {
	if workCounter(l.Unit) {
		return true
	}
	return significant(l.Rate) && (l.Rate.Change > 0) == (l.Row.Change > 0)
}

// For returns the counters of benchmark name in package pkg (and ident),
// in the results' order: changed as the op's own work; changed per op
// only, paced by the op's time; and the units found unchanged.
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
			if row.Sides[0] != nil && row.Sides[1] != nil {
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
