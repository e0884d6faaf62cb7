//go:build linux

package abstat

import "math"

// Geomean is the geometric mean of a table's centers on each side, over
// the rows compared on both with positive centers, and its change.
type Geomean struct {
	Old, New, Change float64
	Rows             int
}

// geomean summarises t's rows that both sides hold and neither failed.
func geomean(t *Table) *Geomean {
	var lo, ln float64
	n := 0
	for _, row := range t.Rows {
		o, nw := row.Sides[0], row.Sides[1]
		if o == nil || nw == nil || row.Verdict == Failed || row.Verdict == Skipped || !(o.Center > 0 && nw.Center > 0) {
			continue
		}
		lo, ln = lo+math.Log(o.Center), ln+math.Log(nw.Center)
		n++
	}
	if n < 2 {
		return nil
	}
	g := &Geomean{Old: math.Exp(lo / float64(n)), New: math.Exp(ln / float64(n)), Rows: n}
	g.Change = g.New/g.Old - 1
	return g
}
