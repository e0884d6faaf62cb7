//go:build linux

package abstat

// DesignTest is a row's test under a design (Options.Design): a planned
// run fixed each row's test before its boots ran (package abplan:
// Stein's two-stage test of kbab -target), so that the test is the
// design's and not Welch's of all the boots, which would inflate t
// where a spread that looked small chose few boots.
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
