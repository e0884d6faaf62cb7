//go:build linux

package abreport

import (
	"fmt"
	"path"
	"strings"

	"github.com/kbench/kbench/internal/abfile"
	"github.com/kbench/kbench/internal/abstat"
)

// sideNames are the sides' names, by abstat's side index.
var sideNames = [2]string{"old", "new"}

// Why words what failed or skipped a row on a side (abstat.Outcome):
// what go test printed, on which side, at which file and line; "" for
// nil.
func Why(o *abstat.Outcome) string {
	if o == nil {
		return ""
	}
	side := sideNames[o.Side]
	switch o.Kind {
	case abfile.Failed:
		return fmt.Sprintf("--- FAIL in %s (%s:%d)", side, o.File, o.Line)
	case abfile.BinaryFailed:
		return fmt.Sprintf("missing from %s, whose test binary failed (%s:%d)", side, o.File, o.Line)
	}
	why := fmt.Sprintf("skipped in %s (%s:%d)", side, o.File, o.Line)
	if o.Reason != "" {
		why += ": " + o.Reason
	}
	return why
}

// jsonProblem is a failure no row shows (Report.Problems), worded.
type jsonProblem struct {
	Side string `json:"side"`
	Pkg  string `json:"package"`
	Name string `json:"name"`
	What string `json:"what"`
}

// problem words a failure no row shows.
func problem(p abstat.Outcome) jsonProblem {
	what, name := fmt.Sprintf("the test binary failed (%s:%d)", p.File, p.Line), p.Pkg
	if p.Kind == abfile.Failed {
		what, name = fmt.Sprintf("--- FAIL, no results (%s:%d)", p.File, p.Line), p.Name
	}
	return jsonProblem{sideNames[p.Side], path.Base(p.Pkg), name, what}
}

// skipWhys words a skip's sides, old then new; "" where a side did not
// skip it.
func skipWhys(s *abstat.Skip) [2]string {
	return [2]string{Why(s.Sides[0]), Why(s.Sides[1])}
}

// skipWhy is a skip's sides worded, joined by "; ".
func skipWhy(s *abstat.Skip) string {
	var why []string
	for _, w := range skipWhys(s) {
		if w != "" {
			why = append(why, w)
		}
	}
	return strings.Join(why, "; ")
}
