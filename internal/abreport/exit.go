//go:build linux

package abreport

// The exit statuses of the three kinds of report, kbcompare's and kbab's
// alike (each command calls these; docs/comparing.md states them). One
// rule for all three: 1 where the report finds a regression or cannot
// vouch for what it was asked, 0 where it can; a better or a
// directionless change is no failure. (2 and up are the commands' own:
// an input or a flag they refuse, a boot that failed, an interrupt.)

// Exit is an A/B's: 1 where some row is worse, or something failed or
// was skipped on one side (nothing is then "nothing worse"), else 0. A
// row without a verdict (underpowered, undecided) is no failure: its
// report says why.
func (a *AB) Exit() int {
	if a.Fails() {
		return 1
	}
	return 0
}

// Exit is a series': 1 where some row has a change point at or above
// -threshold that is worse, or could not be tested (a kernel lacks its boots of the row: it failed,
// was skipped or is missing there, as the A/B's "failed or skipped on one
// side"), else 0.
func (r *SeriesReport) Exit() int {
	for i, res := range r.Results {
		if res.Untested != "" {
			return 1
		}
		for _, c := range res.Changes {
			if !c.Small && ChangeWord(c.Ratio, r.Series.Rows[i].Better) == "worse" {
				return 1
			}
		}
	}
	return 0
}

// Exit is a bisection's: 0 where it names the first bad image, 1 where
// it cannot tell (the confirmation found no difference on the row, a
// step stayed undecided, or an image sat between good and bad: not one
// step).
func (b *BisectRun) Exit() int {
	if b.Verdict.Moved() && b.Search.FirstBad >= 0 {
		return 0
	}
	return 1
}
