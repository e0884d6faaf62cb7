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
		if row.Old == nil || row.New == nil || row.Verdict == Failed || row.Verdict == Skipped {
			continue
		}
		o, nw := row.OldSum.Center, row.NewSum.Center
		if row.Boot != nil {
			o, nw = row.Boot.OldCenter, row.Boot.NewCenter
		}
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
