//go:build linux

package main

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"golang.org/x/perf/benchfmt"

	"github.com/kbench/kbench/internal/unit"
)

// Attribution is what kbcompare says about the kernel counters each row
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
}

// rateSuffix marks the derived per-second units kbcompare adds.
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
func deriveRates(ins [2]*input) {
	for _, in := range ins {
		for i := range in.results {
			res := &in.results[i]
			secPerOp := math.NaN()
			for _, v := range res.values {
				if v.Unit == "sec/op" {
					secPerOp = v.Value
				}
			}
			if !(secPerOp > 0) {
				continue
			}
			var add []benchfmt.Value
			for _, v := range res.values {
				if unit.IsCounter(v.Unit) && !workCounter(v.Unit) {
					add = append(add, benchfmt.Value{Value: v.Value / secPerOp, Unit: v.Unit + rateSuffix})
				}
			}
			res.values = append(res.values, add...)
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

func significant(row *Row) bool {
	return row != nil && (row.Verdict == Better || row.Verdict == Worse || row.Verdict == Changed)
}

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
	find := func(tables []*Table, unit string) *Row {
		for _, t := range tables {
			if t.Pkg == pkg && t.Ident == ident && t.Unit == unit {
				if i := slices.IndexFunc(t.Rows, func(r *Row) bool { return r.Name == name }); i >= 0 {
					return t.Rows[i]
				}
			}
		}
		return nil
	}
	for _, t := range a.Tables {
		row := find([]*Table{t}, t.Unit)
		if row == nil || t.Pkg != pkg || t.Ident != ident {
			continue
		}
		l := AttrLine{Unit: t.Unit, Row: row}
		if !workCounter(t.Unit) {
			l.Rate = find(a.Rates, t.Unit+rateSuffix)
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

// attrDirection words a counter's change: counters have no better side.
func attrDirection(row *Row) string {
	switch {
	case row.Change > 0:
		return "up"
	case row.Change < 0:
		return "down"
	}
	return "~"
}

// pacedNote says how an event counter changed per op and per second.
func pacedNote(l AttrLine) string {
	s := fmt.Sprintf("%s %+.0f%%", l.Unit, 100*l.Row.Change)
	if l.Rate != nil && l.Rate.Old != nil && l.Rate.New != nil {
		if significant(l.Rate) {
			s += fmt.Sprintf(" (%+.0f%%/s)", 100*l.Rate.Change)
		} else {
			s += " (~/s)"
		}
	}
	return s
}

// attributed remembers which rows already carry their counters, so that
// a benchmark with several headline units lists them once, under its
// first table.
type attributed map[[3]string]bool

func (d attributed) first(t *Table, row *Row) bool {
	key := [3]string{t.Pkg, t.Ident, row.Name}
	if d[key] {
		return false
	}
	d[key] = true
	return true
}

// attrText formats the counters of a table's row for the text report, or
// returns nil when the row has none or they were listed already.
func attrText(r *Report, done attributed, t *Table, row *Row) []string {
	own, paced, same := r.Attribution.For(t.Pkg, t.Ident, row.Name)
	if len(own)+len(paced)+len(same) == 0 || !done.first(t, row) {
		return nil
	}
	if len(own)+len(paced) == 0 {
		return []string{fmt.Sprintf("    counters: none changed (%d compared)", len(same))}
	}
	var lines []string
	indent := func(text string) {
		for i, l := range wrap(text, width-8) {
			if i > 0 {
				l = "  " + l
			}
			lines = append(lines, "      "+l)
		}
	}
	if len(own) > 0 {
		lines = append(lines, "    counters that changed per op (evidence, not verdicts):")
		var cs []cells
		var wu, wo, wn, wc, wp, wN int
		for _, l := range own {
			c := formatRow(&Table{Unit: l.Unit}, l.Row)
			c.verdict = attrDirection(l.Row)
			cs = append(cs, c)
			wu = max(wu, runes(l.Unit))
			wo, wn, wc = max(wo, runes(c.old)), max(wn, runes(c.new)), max(wc, runes(c.change))
			wp, wN = max(wp, runes(c.p)), max(wN, runes(c.n))
		}
		for i, c := range cs {
			lines = append(lines, strings.TrimRight("      "+pad(own[i].Unit, wu, false)+"  "+pad(c.old, wo, true)+"  "+
				pad(c.new, wn, true)+"  "+pad(c.change, wc, true)+"  "+pad(c.p, wp, true)+"  "+pad(c.n, wN, true)+"  "+c.verdict, " "))
		}
	}
	if len(paced) > 0 {
		lines = append(lines, "    changed per op only as the op's time did (rate per second ~ or opposite):")
		var notes []string
		for _, l := range paced {
			notes = append(notes, pacedNote(l))
		}
		indent(strings.Join(notes, ", "))
	}
	if len(same) > 0 {
		indent("unchanged: " + strings.Join(same, " "))
	}
	return lines
}

// attrMarkdown is attrText for the markdown report: a nested list.
func attrMarkdown(r *Report, done attributed, t *Table, row *Row) []string {
	own, paced, same := r.Attribution.For(t.Pkg, t.Ident, row.Name)
	if len(own)+len(paced)+len(same) == 0 || !done.first(t, row) {
		return nil
	}
	lines := []string{fmt.Sprintf("- `%s` counters (evidence, not verdicts):", strings.ReplaceAll(row.Name, "`", ""))}
	for _, l := range own {
		c := formatRow(&Table{Unit: l.Unit}, l.Row)
		lines = append(lines, fmt.Sprintf("  - %s: %s → %s, %s (p=%s n=%s), %s", mdCell(l.Unit), c.old, c.new, c.change, c.p, c.n, attrDirection(l.Row)))
	}
	if len(paced) > 0 {
		var notes []string
		for _, l := range paced {
			notes = append(notes, pacedNote(l))
		}
		lines = append(lines, "  - changed per op only as the op's time did: "+mdCell(strings.Join(notes, ", ")))
	}
	if len(same) > 0 {
		lines = append(lines, "  - unchanged: "+mdCell(strings.Join(same, ", ")))
	}
	return lines
}
