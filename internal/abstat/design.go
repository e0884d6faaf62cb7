//go:build linux

package abstat

// A Designed run fixed each row's test before its boots ran (package
// abplan: Stein's two-stage test of kbab -target), so that the test is
// the design's and not Welch's of all the boots: a run that chose its
// boots from their spread would inflate Welch's t where the spread
// looked small.
type Designed interface {
	// TestRow is the design's test of a Primary row, false where the
	// design holds no test of it (Welch's then applies).
	TestRow(t *Table, row *Row) (DesignTest, bool)
}

// DesignTest is a row's test under a design.
type DesignTest struct {
	// Rule names the test ("Stein's two-stage t-test").
	Rule string
	// Decided says the row holds the boots its design planned; a row
	// that does not gets no verdict (Undecided), stays out of the
	// family, and cannot fail the comparison.
	Decided bool
	// P is the test's two-sided p, Change the row's change and Lo, Hi
	// its interval at abmath.Confidence (where Decided).
	P, Change, Lo, Hi float64
	// MDE is the change the row's boots detect at the design's power
	// and level; Boots the boots a side it used or holds, Need those it
	// planned.
	MDE         float64
	Boots, Need int
	// Why says why a row is undecided.
	Why string
}
