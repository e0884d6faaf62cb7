//go:build linux

package abreport

import (
	"fmt"
	"io"
	"strings"

	"golang.org/x/perf/benchunit"

	"github.com/kbench/kbench/internal/abplan"
	"github.com/kbench/kbench/internal/abseries"
	"github.com/kbench/kbench/internal/abstat"
)

// Kernel is a kernel of a kbab run as its reports name it: its label
// and what it boots (the image's file name and the cmdline it adds).
type Kernel struct{ Label, Boots string }

// SeriesRun is what `kbab -series` adds to a series' report
// (SeriesReport.Run): its list, the boots of each kernel and the
// kernels, in series order.
type SeriesRun struct {
	List    string
	Boots   int
	Kernels []Kernel
	// Pictures, where set, is the directory of the series' pictures,
	// relative to the run's.
	Pictures string
}

// BisectRun is a `kbab -bisect` run's outcome: the kernels (good
// first, bad last, the images between), the row, the confirmation's
// verdict and the search.
type BisectRun struct {
	List, Row     string // -bisect's list and -row
	Pkg, RowName  string // the row the pattern picked
	Kernels       []Kernel
	Target        float64 // the confirmation's -target
	ConfirmBoots  int     // boots the confirmation took
	Verdict       abstat.Verdict
	Change        float64 // bad's change from good on the row (0.1: 10% slower)
	Unit          string  // the row's primary unit (sec/op), for the steps' centers
	Search        abseries.SearchResult
	Looks         []int   // a step's looks, in rounds (Search.Looks)
	Level         float64 // the last look's one-sided level
	Opts          abseries.SearchOptions
	BootsInAll    int
	ConfirmReport []byte // the confirmation's A/B report (WriteText)
	// Skipped says why each skipped image (Search.Skipped) was: its
	// commit's build failure.
	Skipped map[int]string
}

// WriteBisect writes kbab -bisect's report: the confirmation's A/B
// report, then the bisection: the rule, each step's image, boots and
// decision, and the first bad image, or why it cannot tell.
func WriteBisect(w io.Writer, b BisectRun) error {
	var o strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&o, format, a...) }
	o.Write(b.ConfirmReport)
	n := len(b.Kernels)
	good, bad := b.Kernels[0].Label, b.Kernels[n-1].Label
	p("\nkbab -bisect %s -row %s: %s %s, good %s, bad %s, %d images between\n", b.List, b.Row, b.Pkg, b.RowName, good, bad, n-2)
	p("confirmation: %s against %s after %d boots: %s", good, bad, b.ConfirmBoots, b.Verdict)
	switch {
	case b.Verdict == abstat.Undecided:
		p("; cannot tell: the planned A/B gave the row no verdict (its boots do not reach -target %s; a larger -target, the step you expect, or -budget), nothing to bisect\n",
			formatMDE(b.Target))
	case !b.Verdict.Moved():
		p("; cannot tell: good and bad do not differ on the row, nothing to bisect\n")
	default:
		p(" (%s)\n", pctChange(b.Change))
		writeSearch(p, b)
	}
	_, err := io.WriteString(w, o.String())
	return err
}

// writeSearch writes the bisection's rule, its steps and what they
// found, through p.
func writeSearch(p func(string, ...any), b BisectRun) {
	n := len(b.Kernels)
	res := b.Search
	allow := "none: one image"
	if b.Opts.Offset > 0 {
		allow = fmt.Sprintf("separate builds: %g of the boot spread, more where the placed images scatter more", b.Opts.Offset)
	}
	p("rule: each step boots its image in rounds with good and bad beside it (good, image, bad; then bad, image, good), "+
		"and after %v rounds t-tests, at levels in proportion to the rounds (%.2g at the last), whether the image differs from both good and bad beyond an allowance for its own offset (%s): not one step; "+
		"else past the midpoint toward bad and beyond the allowance from good (then bad), or the mirror (then good); within the allowance of both, undecided; "+
		"so that the chance of naming a wrong image is at most %g over the %d steps at most, where kernels' own offsets spread no more than the allowance\n",
		b.Looks, b.Level, allow, b.Opts.Wrong, abseries.Steps(n-2))
	image := func(i int) Kernel { return b.Kernels[i+1] } // image i from 0; n-2 the bad kernel
	var all []float64
	for _, st := range res.Steps {
		all = append(all, st.Good, st.ImageCenter, st.Bad)
	}
	sc := benchunit.CommonScale(all, benchunit.ClassOf(b.Unit))
	center := func(v float64) string { return sc.Format(v) + " " + b.Unit }
	for j, st := range res.Steps {
		k := image(st.Image)
		p("step %d: %s (%s): %d rounds, %s: good %s, image %s, bad %s (%.2f of the way from good to bad)\n",
			j+1, k.Label, k.Boots, st.Rounds, st.Decision, center(st.Good), center(st.ImageCenter), center(st.Bad), st.Position)
	}
	for _, i := range res.Skipped {
		p("skipped: %s (%s): does not build: %s\n", image(i).Label, image(i).Boots, b.Skipped[i])
	}
	var last abseries.Step // none where every image was skipped
	if len(res.Steps) > 0 {
		last = res.Steps[len(res.Steps)-1]
	}
	switch {
	case res.FirstBad >= 0:
		k := image(res.FirstBad)
		var or []string
		for _, i := range res.Between() {
			or = append(or, image(i).Label)
		}
		if len(or) > 0 {
			p("first bad: %s (%s), or one before it that does not build: %s\n", k.Label, k.Boots, strings.Join(or, ", "))
		} else {
			p("first bad: %s (%s)\n", k.Label, k.Boots)
		}
	case last.Decision == abseries.Between:
		p("not one step: %s is like neither good nor bad (%.2f of the way from good to bad); the first bad image is not one image. The steps above name what each image measured\n",
			image(last.Image).Label, last.Position)
	default:
		p("cannot tell: a step stayed undecided at %d rounds; the first bad image is after %s and at or before %s\n",
			last.Rounds, image(res.Lo).Label, image(res.Hi).Label)
	}
	p("%d steps, %d step boots, %d boots in all (%d to confirm)\n", len(res.Steps), res.Boots, b.BootsInAll, b.ConfirmBoots)
}

// RunNotes are what a kbab run adds to the text report of its boots.
type RunNotes struct {
	// Design is the planned run's design (-target); nil, or not yet
	// planned, for a fixed run. PlanFile is where the run wrote it.
	Design   *abplan.Design
	PlanFile string
	// ProfileDirs are a -profile run's profile directories and Results
	// its result files (A, B), for the kbcompare command that gives the
	// section's other forms; "": no -profile. ProfileErr says why the
	// run has no section.
	ProfileDirs, Results [2]string
	ProfileErr           error
}

// writeRun ends kbab's text report, b: a planned run's tail
// (plannedTail), the perf-profile section or why there is none (kbab's
// own lines, the retried boots, follow).
func writeRun(b *strings.Builder, a *AB) {
	n := a.Run
	b.WriteString(plannedTail(*n))
	switch {
	case n.ProfileDirs[0] == "":
	case n.ProfileErr != nil:
		fmt.Fprintf(b, "\nperf-profile: none: %v\n", n.ProfileErr)
	default:
		writeProfileText(b, a.Profiles)
		// The "-format json" that the section's "... more" lines name is
		// kbcompare's: say how to get it from this run.
		fmt.Fprintf(b, "\nevery function, other forms: kbcompare -profiles-old %s -profiles-new %s [-format json] %s %s\n",
			n.ProfileDirs[0], n.ProfileDirs[1], n.Results[0], n.Results[1])
	}
}

// plannedTail closes a planned run's report: the rule and how many
// rows it decided. An undecided row's table line and notes say why
// (over budget, cut short, out of reach); the plan has each row's status.
func plannedTail(n RunNotes) string {
	d := n.Design
	if d == nil || !d.Planned {
		return ""
	}
	o := d.Opts
	decided, pending, undecided := d.Progress()
	return fmt.Sprintf("\nkbab -target %s: %s, pilot %d+%d boots, every boot at -count=%d, each row at p <= %.2g (%g over %d rows), gate %s; %d of %d rows decided (the plan: %s)\n",
		formatMDE(o.Target), abplan.RuleName, o.Pilot, o.Pilot, o.Count, d.Level, o.Alpha, decided+pending+undecided,
		formatMDE(o.Threshold), decided, decided+pending+undecided, n.PlanFile)
}
