//go:build linux

// Command kbcompare compares two kbench result files the way a kernel
// reviewer reads an lkp report: the setup lines that differ, then one
// verdict per row that knows its unit's direction, with the change, its
// interval, p and q, the counters that moved under it, and whether the
// comparison could have seen a 5% change at all. With three or more
// boots a side the boots are the samples, because the samples of one
// boot share its layout.
//
//	go run ./internal/cmd/kbcompare [-threshold 5%] [-alpha 0.05] [-format text|brief|json] [-plot DIR] old.txt new.txt
//	go run ./internal/cmd/kbcompare -profiles-old DIR -profiles-new DIR [-profile-frames kernel|all] [-profile-comm REGEXP] [flags] old.txt new.txt
//	go run ./internal/cmd/kbcompare -plan [-target 5%] [-boot-cost DURATION] PILOT.txt | A.txt B.txt
//	go run ./internal/cmd/kbcompare -series [-alpha 0.05] [-threshold 5%] [-format text|json] [-plot DIR] K1.txt K2.txt ...
//
// The statistics are packages abstat, abseries (-series), profdelta
// (the perf-profile section) and abplan (-plan: the design kbab -target
// would run after a pilot of these boots); every form and the exit rule
// are abreport's. docs/kbcompare.md says what each figure is, the
// formulas and why, the JSON schema, the pictures of -plot and the exit
// status: 0 when nothing is worse and nothing failed, 1 when something
// is or did (-series: a worse change point or an untested row; -plan:
// never), 2 for an input or a flag it refuses; 128 for the dropped
// -git-bisect, so that an old `git bisect run` script stops.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/kbench/kbench/internal/abplan"
	"github.com/kbench/kbench/internal/abreport"
	"github.com/kbench/kbench/internal/abseries"
	"github.com/kbench/kbench/internal/abstat"
	"github.com/kbench/kbench/internal/percent"
	"github.com/kbench/kbench/internal/profdelta"
	"github.com/kbench/kbench/internal/testflags"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if bisectFlag(args) {
		fmt.Fprintln(stderr, "kbcompare: -git-bisect is gone: kbab -tree DIR -bisect GOOD..BAD bisects commits (docs/builds.md)")
		return 128 // git bisect run stops: 2 would read as "bad"
	}
	flags := flag.NewFlagSet("kbcompare", flag.ContinueOnError)
	flags.SetOutput(stderr)
	threshold := 0.05
	flags.Var(percent.Value{Fraction: &threshold, Kind: percent.Threshold}, "threshold", "smallest change called better or worse, in `percent`")
	alpha := flags.Float64("alpha", abstat.DefaultOptions.Alpha,
		"significance `level`: a change is significant when its q is at most this; p is Welch's t-test's with 3+ boots a side, else the U-test's")
	format := flags.String("format", "text", "output `format`: text (every row, 100 columns), brief (what changed, 80 columns, one screen) or json (docs/kbcompare.md)")
	flags.Usage = func() {
		fmt.Fprintln(stderr, "usage: kbcompare [flags] old.txt new.txt\n       kbcompare -series [-format text|json] [-plot DIR] K1.txt K2.txt ...")
		flags.PrintDefaults()
	}
	plotDir := flags.String("plot", "", "also draw, into `dir`, an SVG per row that changed or is underpowered and an overview")
	plan := flags.Bool("plan", false, "print the boots a side each row needs to reach -target by Stein's two-stage test (kbab -target's design), from a pilot of two files or of one file's boots taken in turn")
	var target float64 // 0: unset
	flags.Var(percent.Value{Fraction: &target, Kind: percent.Effect}, "target", "with -plan: the minimum detectable effect to reach at 80% power, in `percent` (default: -threshold)")
	bootCost := flags.Duration("boot-cost", 0, "with -plan: the `duration` of one boot of each package, in place of the files' go test times (a host pilot planned for VMs)")
	profilesOld := flags.String("profiles-old", "", "a `dir` of KBENCH_PROFILE profiles of the old side, a subdirectory per boot: adds the perf-profile section (with -profiles-new; docs/profiles.md)")
	profilesNew := flags.String("profiles-new", "", "a `dir` of KBENCH_PROFILE profiles of the new side, a subdirectory per boot")
	profileFrames := flags.String("profile-frames", "kernel", "with -profiles-old and -profiles-new: the frames that name functions, `kernel` or all")
	profileComm := flags.String("profile-comm", "", "with -profiles-old and -profiles-new: keep the samples of the threads whose comm this `regexp` matches, as pprof's -tagfocus=comm= (default: every sample)")
	series := flags.Bool("series", false, "the change points of a series of kernels, one result file per kernel in series order: kbcompare -series K1.txt K2.txt ... (-format text or json; -plot)")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	if !(*alpha > 0 && *alpha < 1) {
		fmt.Fprintf(stderr, "kbcompare: -alpha accepts a number between 0 and 1, not %v\n", *alpha)
		return 2
	}
	opts := abstat.Options{Threshold: threshold, Alpha: *alpha}
	if *series {
		return runSeries(flags, *alpha, threshold, *format, *plotDir, stdout, stderr)
	}
	if *plan {
		return runPlan(flags, opts, target, *bootCost, stdout, stderr)
	}
	if target > 0 || *bootCost != 0 {
		fmt.Fprintln(stderr, "kbcompare: -target and -boot-cost go with -plan")
		return 2
	}
	render := abreport.Forms[*format]
	if render == nil {
		fmt.Fprintf(stderr, "kbcompare: -format accepts text, brief or json, not %q\n", *format)
		return 2
	}
	popts := profdelta.DefaultOptions
	switch *profileFrames {
	case "kernel":
	case "all":
		popts.AllFrames = true
	default:
		fmt.Fprintf(stderr, "kbcompare: -profile-frames accepts kernel or all, not %q\n", *profileFrames)
		return 2
	}
	if *profileComm != "" {
		re, err := regexp.Compile(*profileComm)
		if err != nil {
			fmt.Fprintf(stderr, "kbcompare: -profile-comm accepts a regular expression (Go's syntax), not %q: %v\n", *profileComm, err)
			return 2
		}
		popts.Comm = re
	}
	if (*profilesOld == "") != (*profilesNew == "") {
		fmt.Fprintln(stderr, "kbcompare: -profiles-old and -profiles-new go together: a directory of profiles for each side")
		return 2
	}
	if flags.NArg() != 2 {
		flags.Usage()
		return 2
	}
	rep, err := abstat.Compare(flags.Arg(0), flags.Arg(1), opts)
	if err != nil {
		fmt.Fprintf(stderr, "kbcompare: %v\n", err)
		return 2
	}
	var profs []abreport.RowProfile
	if *profilesOld != "" {
		if profs, err = abreport.RowProfiles(rep, *profilesOld, *profilesNew, popts, [2]string{"-profiles-old", "-profiles-new"}); err != nil {
			fmt.Fprintf(stderr, "kbcompare: %v\n", err)
			return 2
		}
	}
	ab := abreport.New(rep, profs, nil)
	if err := render(stdout, ab); err != nil {
		fmt.Fprintf(stderr, "kbcompare: %v\n", err)
		return 2
	}
	if *plotDir != "" {
		if err := abreport.WritePlots(*plotDir, ab); err != nil {
			fmt.Fprintf(stderr, "kbcompare: -plot: %v\n", err)
			return 2
		}
	}
	return ab.Exit()
}

// runPlan prints the plan of one pilot file or two.
func runPlan(flags *flag.FlagSet, opts abstat.Options, target float64, bootCost time.Duration, stdout, stderr io.Writer) int {
	switch r := refused(flags, func(f string) bool {
		return f == "format" || f == "plot" || strings.HasPrefix(f, "profile")
	}); {
	case r != "":
		fmt.Fprintf(stderr, "kbcompare: %s does not apply to -plan, which prints the plan\n", r)
		return 2
	case flags.NArg() < 1 || flags.NArg() > 2:
		fmt.Fprintln(stderr, "usage: kbcompare -plan [-target 5%] [-boot-cost DURATION] PILOT.txt | A.txt B.txt")
		return 2
	case bootCost < 0:
		fmt.Fprintf(stderr, "kbcompare: -boot-cost %s: want a duration >= 0\n", bootCost)
		return 2
	}
	if target == 0 {
		target = opts.Threshold
	}
	if !(target > 0) {
		fmt.Fprintln(stderr, "kbcompare: -target accepts a percentage above 0 and below 100, such as 5% (it defaults to -threshold, here 0)")
		return 2
	}
	o := abplan.DefaultOptions(target)
	o.Alpha = opts.Alpha
	p, err := abplan.PlanFiles(o, bootCost.Seconds(), flags.Args()...)
	if err != nil {
		fmt.Fprintf(stderr, "kbcompare: %v\n", err)
		return 2
	}
	if err := abreport.WriteDesign(stdout, p); err != nil {
		fmt.Fprintf(stderr, "kbcompare: %v\n", err)
		return 2
	}
	return 0
}

// refused names the flags set on the command line that refuse picks,
// "-a and -b"; "" where none is.
func refused(flags *flag.FlagSet, refuse func(name string) bool) string {
	var names []string
	flags.Visit(func(f *flag.Flag) {
		if refuse(f.Name) {
			names = append(names, "-"+f.Name)
		}
	})
	return strings.Join(names, " and ")
}

// bisectFlag reports whether args name -git-bisect or -bisect, however
// spelled; arguments after "--" are files.
func bisectFlag(args []string) bool {
	for _, s := range args {
		if s == "--" {
			break
		}
		if a := testflags.Parse(s); a.Flag && !a.Test && (a.Name == "git-bisect" || a.Name == "bisect") {
			return true
		}
	}
	return false
}

// runSeries is -series: the change points of the kernels' files, in
// series order, each labelled by its file name without .txt. Exit as
// abreport.SeriesReport.Exit, 2 where a file cannot be read or a flag
// does not apply.
func runSeries(flags *flag.FlagSet, alpha, threshold float64, format, plotDir string, stdout, stderr io.Writer) int {
	render := seriesRenderers[format]
	switch r := refused(flags, func(f string) bool {
		return !slices.Contains([]string{"series", "alpha", "threshold", "format", "plot"}, f)
	}); {
	case r != "":
		fmt.Fprintf(stderr, "kbcompare: %s does not apply to -series, which takes -alpha, -threshold, -format and -plot\n", r)
		return 2
	case render == nil:
		fmt.Fprintf(stderr, "kbcompare: -format with -series accepts text or json, not %q\n", format)
		return 2
	case flags.NArg() < 2:
		fmt.Fprintln(stderr, "usage: kbcompare -series [-alpha 0.05] [-threshold 5%] [-format text|json] [-plot DIR] K1.txt K2.txt ...")
		return 2
	}
	var labels []string
	for _, p := range flags.Args() {
		labels = append(labels, strings.TrimSuffix(filepath.Base(p), ".txt"))
	}
	s, err := abseries.Read(flags.Args(), labels)
	if err != nil {
		fmt.Fprintf(stderr, "kbcompare: %v\n", err)
		return 2
	}
	o := abseries.DefaultOptions
	o.Alpha, o.Threshold = alpha, threshold
	rep := abreport.NewSeries(s, abseries.Detect(s.Medians(), o), o)
	if err := render(stdout, rep); err != nil {
		fmt.Fprintf(stderr, "kbcompare: %v\n", err)
		return 2
	}
	if plotDir != "" {
		if err := abreport.WriteSeriesPlots(plotDir, rep); err != nil {
			fmt.Fprintf(stderr, "kbcompare: -plot: %v\n", err)
			return 2
		}
	}
	return rep.Exit()
}

var seriesRenderers = map[string]func(io.Writer, *abreport.SeriesReport) error{
	"text": abreport.WriteSeriesText,
	"json": abreport.WriteJSON[*abreport.SeriesReport],
}
