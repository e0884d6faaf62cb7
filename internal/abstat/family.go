//go:build linux

package abstat

import (
	"math"
	"slices"

	"golang.org/x/perf/benchfmt"

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
	// loads/s): value × sec/op is one number in every result of the row
	// within derivedTolerance. It shows its Primary's verdict and q.
	Derived Role = "derived"
	// Evidence is any other unit (a latency percentile, a kernel
	// counter): judged on its own p, never counted.
	Evidence Role = "evidence"
)

// derivedTolerance is how far value × sec/op may vary over a row's
// results for a rate to count as derived: go test's 4 to 5 digits move
// it by 0.1% at most.
const derivedTolerance = 0.01

// benchKey names a row: a benchmark in a package and configuration.
type benchKey struct{ pkg, ident, name string }

// bench gathers a row's units (in order of first appearance), its rows
// by unit, and per unit and side value × sec/op of each result.
type bench struct {
	units    []string
	rows     map[string]*Row
	products map[string][][]float64
	sides    int
}

func (b *bench) addProducts(side int, values []benchfmt.Value) {
	i := slices.IndexFunc(values, func(v benchfmt.Value) bool { return v.Unit == "sec/op" })
	if i < 0 {
		return
	}
	for _, v := range values {
		if v.Unit == "sec/op" {
			continue
		}
		p := b.products[v.Unit]
		if p == nil {
			p = make([][]float64, b.sides)
			b.products[v.Unit] = p
		}
		p[side] = append(p[side], v.Value*values[i].Value)
	}
}

// headline reports whether a unit can be a row's verdict: not a kernel
// counter.
func headline(u string) bool { return !unit.IsCounter(u) }

// roles gives each of the bench's rows its Role and Primary.
func (b *bench) roles() {
	primary := ""
	if b.rows["sec/op"] != nil {
		primary = "sec/op"
	} else if i := slices.IndexFunc(b.units, headline); i >= 0 {
		primary = b.units[i]
	}
	for _, u := range b.units {
		row := b.rows[u]
		row.Role, row.primary = Evidence, b.rows[primary]
		switch {
		case u == primary:
			row.Role = Primary
		case primary == "sec/op" && headline(u) && b.constantProduct(u):
			row.Role = Derived
		}
		if row.primary == nil {
			row.primary = row
		}
	}
}

// constantProduct reports whether unit u times sec/op is one number over
// all of the row's results, on every side.
func (b *bench) constantProduct(u string) bool {
	p := b.products[u]
	if p == nil || slices.ContainsFunc(p, func(v []float64) bool { return len(v) == 0 }) {
		return false
	}
	all := slices.Concat(p...)
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
			// In the family as p = 1: the rows a design decides are
			// those whose spread looked small, whose p is a little below
			// uniform; the undecided ones at p = 1 keep the family's q
			// at alpha (Simes).
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
