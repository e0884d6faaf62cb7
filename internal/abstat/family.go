//go:build linux

package abstat

import (
	"math"
	"slices"

	"golang.org/x/perf/benchfmt"

	"github.com/kbench/kbench/internal/abmath"
	"github.com/kbench/kbench/internal/unit"
)

// Role is what one unit of a benchmark is to its verdict. A benchmark
// (package, configuration and full name: a "row" of the report) gets one
// verdict, decided in its Primary unit; counting a row once in each of
// sec/op, loads/s and ops/s read "3 worse" for one change.
type Role string

const (
	// Primary decides the row's verdict and is what Count counts: sec/op
	// where the row reports it (the op's time, which every go benchmark
	// prints and from which kbench's rates are computed), else the first
	// unit the results list that is not a kernel counter.
	Primary Role = "primary"
	// Derived is a rate computed from the Primary sec/op: a fixed count
	// of events per op over the op's time (loops/s, loads/s, req/s, tps),
	// so that value × sec/op is the same in every result of the row, on
	// both sides, within derivedTolerance. It is the same measurement and
	// shows its Primary's verdict and q.
	Derived Role = "derived"
	// Evidence is any other unit (a latency percentile, a share of slow
	// transactions, a rate with a count of its own, the kernel counters):
	// judged on its own p, never counted, never the exit status.
	Evidence Role = "evidence"
)

// derivedTolerance is how far value × sec/op may vary over a row's
// results for a rate to count as derived: go test prints 4 to 5
// significant digits of each, which moves the product by 0.1% at most;
// on the suite's real run the derived rates stayed within 0.07%.
const derivedTolerance = 0.01

// benchKey names a row: a benchmark in a package and configuration.
type benchKey struct{ pkg, ident, name string }

// bench gathers a row's units while the results are grouped.
type bench struct {
	units []string        // in order of first appearance
	rows  map[string]*Row // by unit
	// products holds, per unit other than sec/op, value × sec/op of each
	// result that has both, per side (of sides).
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
		case row.Old != nil && row.New != nil && row.Outcome == nil && !math.IsNaN(row.P):
			rows = append(rows, row)
			ps = append(ps, row.P)
		case row.undecided && row.Outcome == nil:
			// In the family as p = 1: a design keeps a row undecided
			// for its pilot's spread (out of reach, over budget), so the
			// rows it decides are those whose spread looked small, whose
			// p alone is a little below uniform; counted with p = 1 the
			// rows left undecided keep the family's q at alpha
			// (Simes), and no q of theirs is shown.
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
