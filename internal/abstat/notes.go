//go:build linux

package abstat

// Note is a caveat on a row's test, as data, with the figures its kind
// names; package abreport words it.
type Note struct {
	Kind      NoteKind
	Err       error      // benchmath's warning
	Boots     [2]int     // see the kinds
	Values    [2]float64 // the Flat kinds' value or median (old, new)
	Rule, Why string     // the design's rule, why it left the row undecided
}

// NoteKind is what a Note says.
type NoteKind int

const (
	// Library: a warning of benchmath's (Err).
	Library NoteKind = iota + 1
	// TooFewBoots: in boot mode, fewer than MinBoots boots a side
	// (Boots) hold the row.
	TooFewBoots
	// FlatSamples: every sample of both sides is Values[0].
	FlatSamples
	// FlatBootsEqual: every boot of both sides has the median
	// Values[0], so p is 1, not a test.
	FlatBootsEqual
	// FlatBoots: each side's boots share one median (Values), so p is
	// 0, not a test; FlatBootsOld, FlatBootsNew: one side's do.
	FlatBoots
	FlatBootsOld
	FlatBootsNew
	// DesignBoots: the design's Rule planned Boots[0] boots a side and
	// the row holds Boots[1].
	DesignBoots
	// DesignUndecided: the design left the row undecided (Why).
	DesignUndecided
)
