//go:build linux

package abstat

import (
	"math"
	"slices"

	"github.com/kbench/kbench/internal/abmath"
	"github.com/kbench/kbench/internal/unit"
)

// Role is what one unit of a benchmark is to its verdict: a row gets one
// verdict, decided in its Primary unit (counted once in each of sec/op,
// loads/s and ops/s it read "3 worse" for one change).
type Role string

const (
	// Primary decides the row's verdict: sec/op where the row has it,
	// else the first unit that is not a kernel counter.
	Primary Role = "primary"
	// Derived is a fixed count per op over the op's time (loops/s,
	// loads/s): every result of the row has it beside sec/op, and value
	// × sec/op is one number within derivedTolerance. It shows its
	// Primary's verdict and q.
	Derived Role = "derived"
	// Evidence is any other unit (a latency percentile, a kernel
	// counter): judged on its own p, never counted.
	Evidence Role = "evidence"
)

// derivedTolerance is how far value × sec/op may vary over a row's
// results for a rate to count as derived: go test's 4 to 5 digits move
// it by 0.1% at most.
const derivedTolerance = 0.01

// headline reports whether a unit can be a row's verdict: not a kernel
// counter.
func headline(u string) bool { return !unit.IsCounter(u) }

// roles gives each of a benchmark's rows, one per unit (units, in order
// of first appearance), its Role and Primary.
func roles(rows []*Row, units []string) {
	p := slices.Index(units, "sec/op")
	if p < 0 {
		p = slices.IndexFunc(units, headline)
	}
	for i, row := range rows {
		row.Role, row.primary = Evidence, row
		switch {
		case p < 0:
		case i == p:
			row.Role = Primary
		case units[p] == "sec/op" && headline(units[i]) && derived(row, rows[p]):
			row.Role, row.primary = Derived, rows[p]
		default:
			row.primary = rows[p]
		}
	}
}

// derived reports whether row's values times secOp's, result by result,
// are one number on every side.
func derived(row, secOp *Row) bool {
	var all []float64
	for s, bs := range row.Samples {
		so := secOp.Samples[s]
		if bs == nil || so == nil || !slices.EqualFunc(bs.Values, so.Values, func(a, b []float64) bool { return len(a) == len(b) }) {
			return false
		}
		for i, v := range bs.Values {
			for j, x := range v {
				all = append(all, x*so.Values[i][j])
			}
		}
	}
	lo, hi := slices.Min(all), slices.Max(all)
	return lo > 0 && hi/lo-1 <= derivedTolerance
}

// family computes the q-values of the comparison's Primary rows
// compared on both sides (failed rows aside), and counts them.
func (r *Report) family() {
	var rows []*Row
	var ps []float64
	for _, row := range r.Primaries() {
		switch {
		case row.Sides[0] != nil && row.Sides[1] != nil && row.Outcome == nil && !math.IsNaN(row.P):
			rows = append(rows, row)
			ps = append(ps, row.P)
		case row.undecided && row.Outcome == nil:
			// In the family as p = 1, which keeps its q at alpha
			// (docs/comparing.md, "kbab -target").
			rows = append(rows, nil)
			ps = append(ps, 1)
		}
	}
	r.Family, r.Nominal = len(rows), 0
	for i, q := range abmath.BHQ(ps) {
		if rows[i] == nil {
			continue
		}
		rows[i].Q = q
		if ps[i] <= r.Opts.Alpha {
			r.Nominal++
		}
	}
}
