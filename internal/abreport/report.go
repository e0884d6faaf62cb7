//go:build linux

// Package abreport writes the reports of kbcompare and kbab, and holds
// their exit rule, one per kind of report: an A/B (AB) in every form
// (Forms: text for an e-mail, brief for a review thread, JSON for
// scripts; pictures, plot.go) with its perf-profile section
// (profile.go), a series of kernels (series.go), a bisection and kbab's
// notes (kbabruns.go), a planned run's design (plan.go). abstat, abplan
// and abseries hold no text.
package abreport

import (
	"io"

	"github.com/kbench/kbench/internal/abstat"
)

// AB is an A/B's report record: the comparison, the perf-profile
// section's rows (none: no section) and, for kbab, what its run adds
// (nil for kbcompare). Every form renders it (Forms); Exit is its status.
type AB struct {
	*abstat.Report
	Profiles []RowProfile
	Run      *RunNotes
}

// Forms are an A/B's forms by kbcompare's -format name.
var Forms = map[string]func(io.Writer, *AB) error{
	"text":  WriteText,
	"brief": WriteBrief,
	"json":  WriteJSON,
}

// withProfiles writes a's report with report, then its perf-profile
// section with section where it has one.
func withProfiles(w io.Writer, a *AB, report func(io.Writer, *abstat.Report) error, section func(io.Writer, []RowProfile) error) error {
	if err := report(w, a.Report); err != nil || len(a.Profiles) == 0 {
		return err
	}
	return section(w, a.Profiles)
}

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
			if !c.Small && changeWord(c.Ratio, r.Series.Rows[i].Better) == "worse" {
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
