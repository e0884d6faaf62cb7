//go:build linux

package abstat

// Note is a caveat on a row's test, as data: what kind, with the figures
// it names. Package abreport words it (the footnotes, json's warnings).
type Note struct {
	Kind NoteKind
	// Err is benchmath's warning (Library).
	Err error
	// Boots: TooFewBoots, the boots each side holds; DesignBoots, the
	// boots a side the design planned and those held.
	Boots [2]int
	// Values: the one value or median of the Flat kinds (old, new).
	Values [2]float64
	// Rule is the design's rule (DesignBoots); Why, why the design left
	// the row undecided, in package abplan's words (DesignUndecided).
	Rule, Why string
}

// NoteKind is what a Note says.
type NoteKind int

const (
	// Library: a warning of benchmath's (too few samples for an interval
	// or for the U-test to reach alpha, and the like).
	Library NoteKind = iota + 1
	// TooFewBoots: in boot mode, fewer than MinBoots boots a side hold
	// the row: no verdict, since a per-sample test would take a boot's
	// layout for a change.
	TooFewBoots
	// FlatSamples: every sample of both sides is Values[0].
	FlatSamples
	// FlatBootsEqual: every boot of both sides has the median
	// Values[0], so p is 1, not a test.
	FlatBootsEqual
	// FlatBoots: each side's boots share one median (Values), so p is
	// 0, not a test.
	FlatBoots
	// FlatBootsOld and FlatBootsNew: one side's boots share one median:
	// Welch's test rests on the other side's spread alone.
	FlatBootsOld
	FlatBootsNew
	// DesignBoots: the design's Rule planned Boots[0] boots a side and
	// the row holds Boots[1].
	DesignBoots
	// DesignUndecided: the design left the row undecided (Why).
	DesignUndecided
)
