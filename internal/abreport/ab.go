//go:build linux

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
	"text":     WriteText,
	"brief":    WriteBrief,
	"markdown": WriteMarkdown,
	"json":     WriteJSON,
	"csv":      WriteCSV,
}

// withProfiles writes a's report with report, then its perf-profile
// section with section where it has one.
func withProfiles(w io.Writer, a *AB, report func(io.Writer, *abstat.Report) error, section func(io.Writer, []RowProfile) error) error {
	if err := report(w, a.Report); err != nil || len(a.Profiles) == 0 {
		return err
	}
	return section(w, a.Profiles)
}
