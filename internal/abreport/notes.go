//go:build linux

package abreport

import (
	"fmt"

	"github.com/kbench/kbench/internal/abstat"
)

// warnings words a row's notes (abstat.Note), in their order.
func warnings(row *abstat.Row) []string {
	var out []string
	for _, n := range row.Notes {
		out = append(out, noteText(n))
	}
	return out
}

// noteText words one note.
func noteText(n abstat.Note) string {
	switch n.Kind {
	case abstat.Library:
		return n.Err.Error()
	case abstat.TooFewBoots:
		return fmt.Sprintf("too few boots: only %d+%d boots hold this row (need %d each): no verdict, since a per-sample test would take a boot's layout for a change",
			n.Boots[0], n.Boots[1], abstat.MinBoots)
	case abstat.FlatSamples:
		return fmt.Sprintf("no spread: every sample of both sides is %.4g", n.Values[0])
	case abstat.FlatBootsEqual:
		return fmt.Sprintf("no spread: every boot of both sides has the median %.4g, so p is 1, not a test", n.Values[0])
	case abstat.FlatBoots:
		return fmt.Sprintf("no spread: each side's boots share one median (%.4g, %.4g), so p is 0, not a test", n.Values[0], n.Values[1])
	case abstat.FlatBootsOld:
		return "no spread between old's boots: Welch's test rests on new's spread alone"
	case abstat.FlatBootsNew:
		return "no spread between new's boots: Welch's test rests on old's spread alone"
	case abstat.DesignBoots:
		return fmt.Sprintf("%s: %d boots a side planned, %d held", n.Rule, n.Boots[0], n.Boots[1])
	case abstat.DesignUndecided:
		return "undecided: " + n.Why
	}
	return fmt.Sprintf("note %d", n.Kind)
}
