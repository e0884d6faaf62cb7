//go:build linux

// Package abreport writes the reports of kbcompare and kbab, and holds
// their exit rule, one record per kind of report: an A/B (AB) in every
// form (Forms: text for an e-mail, brief for a review thread, JSON for
// scripts; pictures, plot.go) with its perf-profile section
// (profile.go), a series of kernels (series.go), a bisection and kbab's
// notes (kbabruns.go), a planned run's design (plan.go). abstat, abplan
// and abseries hold no text.
package abreport

import (
	"encoding/json"
	"io"
	"math"
	"slices"

	"github.com/kbench/kbench/internal/abfile"
	"github.com/kbench/kbench/internal/abstat"
	"github.com/kbench/kbench/internal/profdelta"
)

// Num is a number of a record: JSON writes it as null where it has none
// (NaN, ±Inf); the forms see the number itself.
type Num = profdelta.Num

// AB is an A/B's report record, made once (New) from the comparison and
// its perf-profile section: every form renders it (Forms, WritePlots),
// -format json writes its fields (schema kbcompare/3: docs/kbcompare.md
// describes each), Exit is its status. Run is what a kbab run adds (nil
// for kbcompare).
type AB struct {
	Schema     string             `json:"schema"`
	Old        string             `json:"old"`
	New        string             `json:"new"`
	Threshold  float64            `json:"threshold"`
	Alpha      float64            `json:"alpha"`
	Boots      Sides              `json:"boots"`
	BootMode   bool               `json:"boot_mode"`
	Setup      []abstat.SetupDiff `json:"setup"`
	SetupEqual int                `json:"setup_equal"`
	Rows       []*Row             `json:"rows"`
	Geomeans   []Geomean          `json:"geomeans"`
	Problems   []Problem          `json:"problems"`
	Skips      []Skip             `json:"skips,omitempty"`
	Summary    Summary            `json:"summary"`
	Profiles   []Profile          `json:"profiles,omitempty"`

	Run    *RunNotes `json:"-"`
	opts   abstat.Options
	pulses [2][]abfile.Pulse
}

// Sides counts boots a side.
type Sides struct {
	Old int `json:"old"`
	New int `json:"new"`
}

// Side is one side of a comparison: its center with its interval, its
// samples and the boots that hold them.
type Side struct {
	Center Num `json:"center"`
	Lo     Num `json:"lo"`
	Hi     Num `json:"hi"`
	N      int `json:"n"`
	Boots  int `json:"boots"`
}

// Cmp compares one unit of a benchmark: each side (nil where absent),
// the change with its interval, the test's p and which test.
type Cmp struct {
	Old      *Side  `json:"old"`
	New      *Side  `json:"new"`
	Change   Num    `json:"change"`
	ChangeLo Num    `json:"change_lo"`
	ChangeHi Num    `json:"change_hi"`
	P        Num    `json:"p"`
	Test     string `json:"test"` // welch, utest, "" (not compared)
}

// Row is a benchmark in one unit.
type Row struct {
	Package   string      `json:"package"`
	Ident     string      `json:"ident,omitempty"`
	Name      string      `json:"name"`
	Unit      string      `json:"unit"`
	Direction string      `json:"direction"`
	Role      abstat.Role `json:"role"`
	Cmp
	Q        Num            `json:"q"`
	Verdict  abstat.Verdict `json:"verdict"`
	MDE      Num            `json:"mde"`
	Need     int            `json:"need"`
	NeedUnit string         `json:"need_unit"` // "" where no power was computed
	Within   Num            `json:"within"`
	Between  Num            `json:"between"`
	Why      string         `json:"why,omitempty"`
	Warnings []string       `json:"warnings,omitempty"`
	Counters []Counter      `json:"counters,omitempty"`

	better      int  // the unit's direction: +1 higher, -1 lower, 0 unknown
	undecidable bool // per sample, too few samples to reach alpha
	src         *abstat.Row
}

// Counter is a kernel counter under a row: own (changed as the op's own
// work), paced (changed per op only as the op's time did) or same.
type Counter struct {
	Unit  string `json:"unit"`
	Group string `json:"group"`
	Cmp
	Verdict     string         `json:"verdict"` // up, down, ~
	RateVerdict abstat.Verdict `json:"rate_verdict,omitempty"`
	RateChange  Num            `json:"rate_change"`
}

// Geomean is a table's geometric mean of centers.
type Geomean struct {
	Package   string `json:"package"`
	Ident     string `json:"ident,omitempty"`
	Unit      string `json:"unit"`
	Direction string `json:"direction"`
	Old       Num    `json:"old"`
	New       Num    `json:"new"`
	Change    Num    `json:"change"`
	Rows      int    `json:"rows"`
}

// Problem is a failure no row shows, worded.
type Problem struct {
	Side string `json:"side"`
	Pkg  string `json:"package"`
	Name string `json:"name"`
	What string `json:"what"`
}

// Skip is a row that skipped with no results on either side, each
// side's reason worded ("" where it did not skip).
type Skip struct {
	Pkg  string    `json:"package"`
	Name string    `json:"name"`
	Why  [2]string `json:"why"`
}

// Summary counts the rows, each in its primary unit, by verdict.
type Summary struct {
	Rows         int `json:"rows"`
	Family       int `json:"family"`
	Nominal      int `json:"nominal"`
	Worse        int `json:"worse"`
	Better       int `json:"better"`
	Changed      int `json:"changed"`
	Same         int `json:"same"`
	Underpowered int `json:"underpowered"`
	OldOnly      int `json:"old_only"`
	NewOnly      int `json:"new_only"`
	Failed       int `json:"failed"`
	Skipped      int `json:"skipped"`
	Undecided    int `json:"undecided,omitempty"`
	Problems     int `json:"problems"`
	Exit         int `json:"exit"`
}

// counts are s's counts by verdict.
func (s *Summary) counts() map[abstat.Verdict]*int {
	return map[abstat.Verdict]*int{abstat.Worse: &s.Worse, abstat.Better: &s.Better, abstat.Changed: &s.Changed,
		abstat.Same: &s.Same, abstat.Underpowered: &s.Underpowered, abstat.OldOnly: &s.OldOnly, abstat.NewOnly: &s.NewOnly,
		abstat.Failed: &s.Failed, abstat.Skipped: &s.Skipped, abstat.Undecided: &s.Undecided}
}

// Forms are an A/B's forms by kbcompare's -format name.
var Forms = map[string]func(io.Writer, *AB) error{
	"text":  WriteText,
	"brief": WriteBrief,
	"json":  WriteJSON[*AB],
}

// WriteJSON writes a record (AB, SeriesReport) as one indented JSON
// object.
func WriteJSON[R any](w io.Writer, r R) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// New makes the record of comparison r, its perf-profile section
// (RowProfiles; none: no section) and a kbab run's notes (nil: none).
func New(r *abstat.Report, profs []Profile, run *RunNotes) *AB {
	a := &AB{Schema: "kbcompare/3", Old: r.Old, New: r.New, Threshold: r.Opts.Threshold, Alpha: r.Opts.Alpha,
		Boots: Sides{r.Boots[0], r.Boots[1]}, BootMode: r.BootMode, Setup: append([]abstat.SetupDiff{}, r.Setup...), SetupEqual: r.SetupEqual,
		Rows: []*Row{}, Geomeans: []Geomean{}, Problems: []Problem{}, Run: run, opts: r.Opts, pulses: r.Pulses, Profiles: profs}
	for _, s := range r.Skips {
		a.Skips = append(a.Skips, Skip{s.Pkg, s.Name, [2]string{Why(s.Sides[0]), Why(s.Sides[1])}})
	}
	for _, p := range r.Problems {
		a.Problems = append(a.Problems, problem(p))
	}
	for _, t := range r.Tables {
		for _, row := range t.Rows {
			a.Rows = append(a.Rows, rowOf(r, t, row))
		}
		if g := t.Geomean; g != nil {
			a.Geomeans = append(a.Geomeans, Geomean{t.Pkg, t.Ident, t.Unit, dirWord(t.Better), Num(g.Old), Num(g.New), Num(g.Change), g.Rows})
		}
	}
	s := &a.Summary
	s.Family, s.Nominal, s.Problems = r.Family, r.Nominal, len(r.Problems)
	for _, row := range a.primaries() {
		s.Rows++
		if n := s.counts()[row.Verdict]; n != nil {
			*n++
		}
	}
	s.Exit = a.Exit()
	return a
}

// nan is a Num without a value.
var nan = Num(math.NaN())

// cmpOf is row's comparison.
func cmpOf(row *abstat.Row) Cmp {
	c := Cmp{Change: Num(row.Change), ChangeLo: Num(row.ChangeLo), ChangeHi: Num(row.ChangeHi), P: Num(row.P), Test: row.Test}
	var sides [2]*Side
	for i, s := range row.Sides {
		if s != nil {
			sides[i] = &Side{Num(s.Center), Num(s.Lo), Num(s.Hi), s.N, s.Boots}
		}
	}
	c.Old, c.New = sides[0], sides[1]
	if c.Old == nil || c.New == nil {
		c.Change = nan
	}
	return c
}

// rowOf is the record's row of t's row.
func rowOf(r *abstat.Report, t *abstat.Table, row *abstat.Row) *Row {
	out := &Row{Package: t.Pkg, Ident: t.Ident, Name: row.Name, Unit: t.Unit, Direction: dirWord(t.Better), Role: row.Role,
		Cmp: cmpOf(row), Q: Num(row.Q), Verdict: row.Verdict, MDE: nan, Within: Num(row.Within), Between: Num(row.Between),
		Why: Why(row.Outcome), better: t.Better, src: row}
	for _, n := range row.Notes {
		out.Warnings = append(out.Warnings, noteText(n))
	}
	if out.Test != "" {
		out.undecidable = row.TooFew
		if pw := row.Power; pw != nil {
			out.MDE, out.Need, out.NeedUnit = Num(pw.MDE), pw.Need, "boots"
		}
	}
	own, paced, same := r.Attribution.For(t.Pkg, t.Ident, row.Name)
	for _, g := range []struct {
		name  string
		lines []abstat.AttrLine
	}{{"own", own}, {"paced", paced}} {
		for _, l := range g.lines {
			c := Counter{Unit: l.Unit, Group: g.name, Cmp: cmpOf(l.Row), Verdict: counterDirection(l.Row.Change), RateChange: nan}
			if l.Rate != nil && l.Rate.Test != "" {
				c.RateVerdict, c.RateChange = l.Rate.Verdict, Num(l.Rate.Change)
			}
			out.Counters = append(out.Counters, c)
		}
	}
	for _, u := range same {
		out.Counters = append(out.Counters, Counter{Unit: u, Group: "same", Verdict: "~", Cmp: Cmp{Change: nan, ChangeLo: nan,
			ChangeHi: nan, P: nan}, RateChange: nan})
	}
	return out
}

// primaries are the rows in their primary unit, in report order.
func (a *AB) primaries() []*Row {
	var out []*Row
	for _, row := range a.Rows {
		if row.Role == abstat.Primary {
			out = append(out, row)
		}
	}
	return out
}

// failures counts the rows and problems that fail the comparison
// whatever the statistics say.
func (a *AB) failures() int { return a.Summary.Failed + a.Summary.Skipped + len(a.Problems) }

// Profile is one row's kernel profiles compared across boots (package
// profdelta), for the perf-profile section: the row (in its primary
// unit, for the verdict) and the delta.
type Profile struct {
	Package string         `json:"package"`
	Ident   string         `json:"ident,omitempty"`
	Name    string         `json:"name"`
	Verdict abstat.Verdict `json:"verdict"`
	Boots   Sides          `json:"boots"`
	*profdelta.Delta
	row *abstat.Row
}

// The exit statuses of the three kinds of report, kbcompare's and kbab's
// alike (docs/kbcompare.md states them), by one rule: 1 where the report
// finds a regression or cannot vouch for what it was asked, 0 where it
// can; a better or a directionless change is no failure. (2 and up are
// the commands' own: a refused input or flag, a failed boot, an
// interrupt.)

// Exit is an A/B's: 1 where some row is worse, or something failed or
// was skipped on one side; a row without a verdict (underpowered,
// undecided) is no failure: its report says why.
func (a *AB) Exit() int {
	return b2i(a.Summary.Worse > 0 || a.failures() > 0)
}

// Exit is a series': 1 where some change point at or above -threshold
// is worse, or a row could not be tested (a kernel lacks its boots of
// it, as the A/B's "failed or skipped on one side").
func (r *SeriesReport) Exit() int {
	return b2i(slices.ContainsFunc(r.Rows, func(row *SeriesRow) bool {
		return row.Untested != "" || slices.ContainsFunc(row.Changes, func(c seriesChange) bool { return c.Verdict == "worse" })
	}))
}

// Exit is a bisection's: 0 where it names the first bad image, 1 where
// it cannot tell (no difference on the row, a step undecided, or an
// image between good and bad: not one step).
func (b *BisectRun) Exit() int {
	return b2i(!b.Verdict.Moved() || b.Search.FirstBad < 0)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
