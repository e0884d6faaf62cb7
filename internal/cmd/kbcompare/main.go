//go:build linux

// Command kbcompare compares two kbench result files the way a kernel
// reviewer reads an lkp report, plans the boots of an A/B (-plan) and
// finds the change points of a series of kernels (-series); every form
// and the exit rule are package abreport's. docs/kbcompare.md says what
// each figure is, the flags, the JSON schema and the exit status.
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
	plotDir := flags.String("plot", "", "also draw, into `dir`, an SVG per row that changed or is underpowered")
	plan := flags.Bool("plan", false, "print the boots a side each row needs to reach -target by Stein's two-stage test (kbab -target's design), from a pilot of two files or of one file's boots taken in turn")
	var target float64 // 0: unset
	flags.Var(percent.Value{Fraction: &target, Kind: percent.Effect}, "target", "with -plan: the minimum detectable effect to reach at 80% power, in `percent` (default: -threshold)")
	bootCost := flags.Duration("boot-cost", 0, "with -plan: the `duration` of one boot of each package, in place of the files' go test times (a host pilot planned for VMs)")
	profilesOld := flags.String("profiles-old", "", "a `dir` of KBENCH_PROFILE profiles of the old side, a subdirectory per boot: adds the perf-profile section (with -profiles-new; docs/profiles.md)")
	profilesNew := flags.String("profiles-new", "", "a `dir` of KBENCH_PROFILE profiles of the new side, a subdirectory per boot")
	profileComm := flags.String("profile-comm", "", "with -profiles-old and -profiles-new: keep the samples of the threads whose comm this `regexp` matches, as pprof's -tagfocus=comm= (default: every sample)")
	series := flags.Bool("series", false, "the change points of a series of kernels, one result file per kernel in series order: kbcompare -series K1.txt K2.txt ... (-format text or json; -plot)")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	if !(*alpha > 0 && *alpha < 1) {
		return refuse(stderr, "kbcompare: -alpha accepts a number between 0 and 1, not %v", *alpha)
	}
	opts := abstat.Options{Threshold: threshold, Alpha: *alpha}
	switch {
	case *series:
		return runSeries(flags, *alpha, threshold, *format, *plotDir, stdout, stderr)
	case *plan:
		return runPlan(flags, opts, target, *bootCost, stdout, stderr)
	case target > 0 || *bootCost != 0:
		return refuse(stderr, "kbcompare: -target and -boot-cost go with -plan")
	case abreport.Forms[*format] == nil:
		return refuse(stderr, "kbcompare: -format accepts text, brief or json, not %q", *format)
	}
	popts := profdelta.DefaultOptions
	if *profileComm != "" {
		re, err := regexp.Compile(*profileComm)
		if err != nil {
			return refuse(stderr, "kbcompare: -profile-comm accepts a regular expression (Go's syntax), not %q: %v", *profileComm, err)
		}
		popts.Comm = re
	}
	if (*profilesOld == "") != (*profilesNew == "") {
		return refuse(stderr, "kbcompare: -profiles-old and -profiles-new go together: a directory of profiles for each side")
	}
	if flags.NArg() != 2 {
		flags.Usage()
		return 2
	}
	rep, err := abstat.Compare(flags.Arg(0), flags.Arg(1), opts)
	if err != nil {
		return refuse(stderr, "kbcompare: %v", err)
	}
	var profs []abreport.Profile
	if *profilesOld != "" {
		if profs, err = abreport.RowProfiles(rep, *profilesOld, *profilesNew, popts, [2]string{"-profiles-old", "-profiles-new"}); err != nil {
			return refuse(stderr, "kbcompare: %v", err)
		}
	}
	ab := abreport.New(rep, profs, nil)
	return write(stdout, stderr, ab, abreport.Forms[*format], *plotDir, abreport.WritePlots, ab.Exit)
}

// refuse writes kbcompare's message for an input or a flag it refuses
// and gives its exit status, 2.
func refuse(stderr io.Writer, format string, a ...any) int {
	fmt.Fprintf(stderr, format+"\n", a...)
	return 2
}

// write renders a report, draws its pictures into plotDir ("": none)
// and gives the report's exit status, or 2 where either fails.
func write[R any](stdout, stderr io.Writer, rep R, render func(io.Writer, R) error, plotDir string, plot func(string, R) error, exit func() int) int {
	if err := render(stdout, rep); err != nil {
		return refuse(stderr, "kbcompare: %v", err)
	}
	if plotDir != "" {
		if err := plot(plotDir, rep); err != nil {
			return refuse(stderr, "kbcompare: -plot: %v", err)
		}
	}
	return exit()
}

// runPlan prints the plan of one pilot file or two.
func runPlan(flags *flag.FlagSet, opts abstat.Options, target float64, bootCost time.Duration, stdout, stderr io.Writer) int {
	if target == 0 {
		target = opts.Threshold
	}
	switch r := refused(flags, func(f string) bool {
		return f == "format" || f == "plot" || strings.HasPrefix(f, "profile")
	}); {
	case r != "":
		return refuse(stderr, "kbcompare: %s does not apply to -plan, which prints the plan", r)
	case flags.NArg() < 1 || flags.NArg() > 2:
		return refuse(stderr, "usage: kbcompare -plan [-target 5%%] [-boot-cost DURATION] PILOT.txt | A.txt B.txt")
	case bootCost < 0:
		return refuse(stderr, "kbcompare: -boot-cost %s: want a duration >= 0", bootCost)
	case !(target > 0):
		return refuse(stderr, "kbcompare: -target accepts a percentage above 0 and below 100, such as 5%% (it defaults to -threshold, here 0)")
	}
	o := abplan.DefaultOptions(target)
	o.Alpha = opts.Alpha
	p, err := abplan.PlanFiles(o, bootCost.Seconds(), flags.Args()...)
	if err == nil {
		err = abreport.WriteDesign(stdout, p)
	}
	if err != nil {
		return refuse(stderr, "kbcompare: %v", err)
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
// series order, each labelled by its file name without .txt.
func runSeries(flags *flag.FlagSet, alpha, threshold float64, format, plotDir string, stdout, stderr io.Writer) int {
	render := map[string]func(io.Writer, *abreport.SeriesReport) error{
		"text": abreport.WriteSeriesText, "json": abreport.WriteJSON[*abreport.SeriesReport]}[format]
	switch r := refused(flags, func(f string) bool {
		return !slices.Contains([]string{"series", "alpha", "threshold", "format", "plot"}, f)
	}); {
	case r != "":
		return refuse(stderr, "kbcompare: %s does not apply to -series, which takes -alpha, -threshold, -format and -plot", r)
	case render == nil:
		return refuse(stderr, "kbcompare: -format with -series accepts text or json, not %q", format)
	case flags.NArg() < 2:
		return refuse(stderr, "usage: kbcompare -series [-alpha 0.05] [-threshold 5%%] [-format text|json] [-plot DIR] K1.txt K2.txt ...")
	}
	var labels []string
	for _, p := range flags.Args() {
		labels = append(labels, strings.TrimSuffix(filepath.Base(p), ".txt"))
	}
	s, err := abseries.Read(flags.Args(), labels)
	if err != nil {
		return refuse(stderr, "kbcompare: %v", err)
	}
	o := abseries.DefaultOptions
	o.Alpha, o.Threshold = alpha, threshold
	rep := abreport.NewSeries(s, abseries.Detect(s.Medians(), o), o)
	return write(stdout, stderr, rep, render, plotDir, abreport.WriteSeriesPlots, rep.Exit)
}
