//go:build linux

package main

import (
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/kbench/kbench/internal/abreport"
	"github.com/kbench/kbench/internal/abstat"
)

// Exit statuses of -git-bisect, as `git bisect run` reads them.
const (
	bisectGood  = 0   // the candidate is like GOOD
	bisectBad   = 1   // like BAD
	bisectSkip  = 125 // cannot tell: git bisect skips the commit
	bisectAbort = 128 // nothing to bisect by (bad input, GOOD like BAD): git bisect stops
)

// bisectRow is one row (benchmark and unit) judged in -git-bisect.
type bisectRow struct {
	pkg, name, unit string
	dir             float64     // sign of BAD's change from GOOD
	fromGood        *abstat.Row // the candidate against GOOD
	fromBad         *abstat.Row // against BAD
	gb              *abstat.Row // BAD against GOOD
}

// runBisect judges CANDIDATE against GOOD and BAD and prints one line
// saying why; rowPattern, if set, picks the rows ("pkg/name" matched as
// a regular expression) where the files share several benchmarks. A row
// is judged in its primary unit on its own p (opts.PerRow): it was
// chosen before the candidate was measured, so no family of rows is
// corrected for, and the other rows of the files must not move its
// verdict.
func runBisect(files []string, opts abstat.Options, rowPattern string, stdout, stderr io.Writer) int {
	say := func(code int, format string, args ...any) int {
		word := map[int]string{bisectGood: "like GOOD", bisectBad: "like BAD", bisectSkip: "cannot tell", bisectAbort: "cannot bisect"}[code]
		fmt.Fprintf(stdout, "kbcompare -git-bisect: %s (exit %d): %s\n", word, code, fmt.Sprintf(format, args...))
		return code
	}
	if len(files) != 3 {
		fmt.Fprintln(stderr, "usage: kbcompare -git-bisect [-row REGEXP] [flags] GOOD.txt BAD.txt CANDIDATE.txt")
		return bisectAbort
	}
	var re *regexp.Regexp
	if rowPattern != "" {
		var err error
		if re, err = regexp.Compile(rowPattern); err != nil {
			fmt.Fprintf(stderr, "kbcompare: -row accepts a regular expression matched against package/name: %v\n", err)
			return bisectAbort
		}
	}
	good, bad, cand := files[0], files[1], files[2]
	var reps [3]*abstat.Report
	for i, pair := range [][2]string{{good, bad}, {good, cand}, {bad, cand}} {
		rep, err := abstat.Compare(pair[0], pair[1], opts)
		if err != nil {
			fmt.Fprintf(stderr, "kbcompare: %v\n", err)
			return say(bisectAbort, "an input cannot be read")
		}
		reps[i] = rep
	}
	gb, gc, bc := reps[0], reps[1], reps[2]
	// The rows all three files hold (or that failed in one of them).
	var rows []*bisectRow
	benchmarks := map[string]bool{}
	for _, t := range gb.Tables {
		for _, row := range t.Rows {
			key := t.Pkg + "/" + row.Name
			if row.Role != abstat.Primary || re != nil && !re.MatchString(key) {
				continue
			}
			br := &bisectRow{pkg: t.Pkg, name: row.Name, unit: t.Unit, gb: row,
				fromGood: gc.Find(t.Pkg, t.Unit, row.Name), fromBad: bc.Find(t.Pkg, t.Unit, row.Name)}
			// Where BAD and the candidate both failed the row, their
			// comparison has no row: none is needed then.
			if br.fromGood == nil || br.fromBad == nil && !failedIn(br.gb, 1) || br.gb.Old == nil && br.gb.Verdict != abstat.Failed {
				continue
			}
			rows = append(rows, br)
			benchmarks[key] = true
		}
	}
	switch {
	case len(rows) == 0 && re != nil:
		return say(bisectAbort, "no row that all three files hold matches -row %q", rowPattern)
	case len(rows) == 0:
		return say(bisectAbort, "the three files share no row")
	case len(benchmarks) > 1:
		names := slices.Sorted(func(yield func(string) bool) {
			for k := range benchmarks {
				if !yield(k) {
					return
				}
			}
		})
		if len(names) > 4 {
			names = append(names[:4], "...")
		}
		return say(bisectAbort, "the files share %d benchmarks (%s): name the one to judge with -row", len(benchmarks), strings.Join(names, ", "))
	}
	var like, why []string
	regressed := 0
	for _, br := range rows {
		label := fmt.Sprintf("%s %s %s", br.pkg, br.name, br.unit)
		switch {
		case failedIn(br.gb, 0):
			return say(bisectAbort, "%s failed in GOOD: %s", label, abreport.Why(br.gb.Outcome))
		case failedIn(br.gb, 1):
			// The regression is a failure: did the candidate fail too?
			regressed++
			if failedIn(br.fromGood, 1) {
				like = append(like, "bad")
				why = append(why, fmt.Sprintf("%s failed in BAD and in the candidate: %s", label, abreport.Why(br.fromGood.Outcome)))
			} else {
				like = append(like, "good")
				why = append(why, fmt.Sprintf("%s failed in BAD (%s), passed in the candidate", label, abreport.Why(br.gb.Outcome)))
			}
			continue
		case br.fromGood.Verdict == abstat.Failed || br.fromBad.Verdict == abstat.Failed:
			return say(bisectSkip, "%s failed in the candidate", label)
		case !br.gb.Verdict.Moved():
			continue // not a row that tells GOOD from BAD
		}
		regressed++
		br.dir = math.Copysign(1, br.gb.Change)
		fromGood := br.fromGood.Verdict.Moved() && math.Copysign(1, br.fromGood.Change) == br.dir
		fromBad := br.fromBad.Verdict.Moved() && math.Copysign(1, br.fromBad.Change) == -br.dir
		detail := fmt.Sprintf("%s: %s from GOOD (%s), %s from BAD (%s); BAD is %+.1f%% from GOOD", label,
			describe(br.fromGood), pOf(br.fromGood), describe(br.fromBad), pOf(br.fromBad), 100*br.gb.Change)
		switch {
		case fromBad && !fromGood:
			like = append(like, "good")
		case fromGood && !fromBad:
			like = append(like, "bad")
		case fromGood && fromBad:
			like = append(like, "between")
			detail += " (between the two)"
		default:
			like = append(like, "neither")
			detail += fmt.Sprintf(" (too noisy: mde %s from GOOD)", abreport.FormatMDE(br.fromGood.Power.MDE))
		}
		why = append(why, detail)
	}
	if regressed == 0 {
		return say(bisectAbort, "GOOD and BAD do not differ in %s: nothing to bisect by", rowsLabel(rows))
	}
	all := func(v string) bool {
		return !slices.ContainsFunc(like, func(s string) bool { return s != v })
	}
	agree := strings.Join(why, "; ")
	switch {
	case all("good"):
		return say(bisectGood, "%s", agree)
	case all("bad"):
		return say(bisectBad, "%s", agree)
	}
	return say(bisectSkip, "%s", strings.Join(why, "; "))
}

// failedIn reports whether a compared row is FAILED because of its side
// (0 old, 1 new): a --- FAIL line there, or its test binary failing
// there.
func failedIn(row *abstat.Row, side int) bool {
	return row.Verdict == abstat.Failed && row.Outcome != nil && row.Outcome.Side == side
}

func describe(row *abstat.Row) string {
	if row.Verdict.Moved() {
		return fmt.Sprintf("%+.1f%%", 100*row.Change)
	}
	return fmt.Sprintf("~ (%+.1f%%)", 100*row.Change)
}

func pOf(row *abstat.Row) string {
	if row.Boot != nil {
		return fmt.Sprintf("p=%.3f, %d+%d boots", row.Boot.P, row.Boot.N1, row.Boot.N2)
	}
	return fmt.Sprintf("p=%.3f", row.P)
}

func rowsLabel(rows []*bisectRow) string {
	var s []string
	for _, r := range rows {
		s = append(s, r.pkg+" "+r.name+" "+r.unit)
	}
	return strings.Join(s, ", ")
}
