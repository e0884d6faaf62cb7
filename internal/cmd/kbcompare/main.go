//go:build linux

// Command kbcompare compares two kbench result files the way a kernel
// reviewer reads an lkp report: first what differs between the two
// machines' setups (the "# kbench" fingerprint lines and file
// configuration), then, per benchmark and unit, the base and new medians
// with their 95% confidence intervals, the change, the Mann-Whitney U
// p-value and a verdict that knows which direction of each unit is better.
//
//	go run ./internal/cmd/kbcompare [-threshold 5%] [-alpha 0.05] [-format text|markdown] old.txt new.txt
//
// The statistics are golang.org/x/perf/benchmath's with benchstat's
// defaults, on results grouped as benchstat groups them (by package, full
// name including the -GOMAXPROCS suffix, and unit), so medians, ranges
// and p-values are the ones `go tool benchstat old.txt new.txt` prints.
// Configuration lines that hold one value throughout a file (goos, cpu)
// describe the setup and are shown in the header; where the two files
// differ in one, benchstat would print separate tables and compare nothing.
//
// A file may hold several boots of its kernel, one run after another
// (`tee -a` after each boot); results belong to the boot named by the
// last `# kbench kernel.boot_id` line above them. With at least MinBoots
// (3) boots on each side the boots are the samples: each row's per-boot
// medians are compared with Welch's t-test on their logs, n counts boots,
// and each row shows the spread within and between boots. With fewer, the
// statistics are per sample, as benchstat's, and the header says that
// boot-to-boot variation is unmeasured, so a change can be a layout shift
// between two boots.
//
// Why boots: KASLR and boot-time layout (code and data placement, page
// colouring) shift a microbenchmark by a few percent from one boot to the
// next of the same kernel (report 004 is such a layout effect), and every
// sample of a boot shares its layout: ten samples of one boot are one
// draw of the layout, so a per-sample test calls a layout shift a kernel
// change. Why Welch's t-test on the logs of per-boot medians: with 3 boots
// a side there are 20 ways to split the 6 medians into two groups of 3,
// so a rank test (Mann-Whitney U) or a permutation test cannot give a
// two-sided p below 2/20 = 0.1, however far apart the kernels are; the
// t-test weighs how far apart the groups are against their spread, so 3
// clearly separated boots a side reach p < 0.05. A boot's median
// summarises many samples, which makes it close to normal, the t-test's
// assumption; logs make the tested quantity a ratio, so sec/op and ops/s
// of one row get the same p; Welch's form does not assume both kernels
// vary alike from boot to boot. One odd boot widens the spread and makes
// the test more cautious, not less.
//
// A change is "better" or "worse" when p <= alpha and it is at least
// threshold in size; otherwise "~". Units are lower-is-better for sec/op,
// B/op and allocs/op, higher-is-better for B/s, and follow `Unit <unit>
// better=higher|lower` metadata lines otherwise. A large significant
// change in a unit without a direction is "changed", and a benchmark or
// unit that only one file has is "old only" or "new only"; neither fails.
// A row for which go test printed `--- FAIL` is "FAILED", one that a side
// lacks because it printed `--- SKIP` for it there (go test -v) is
// "skipped", and failed benchmarks without rows and failed test binaries
// are listed: none of them is ever "nothing worse".
//
// Exit status: 0 when nothing is worse and nothing failed, 1 when some
// change is worse or something failed or skipped on one side, 2 when an
// input cannot be read or parsed (the message names the file and line) or
// the flags are bad.
package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"golang.org/x/perf/benchmath"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// percent is a flag value written as "5", "5%" or "2.5%".
type percent float64

func (p *percent) String() string { return strconv.FormatFloat(float64(*p), 'g', -1, 64) + "%" }

func (p *percent) Set(s string) error {
	v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "%"), 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return fmt.Errorf("want a percentage >= 0, such as 5%% or 2.5")
	}
	*p = percent(v)
	return nil
}

func run(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("kbcompare", flag.ContinueOnError)
	flags.SetOutput(stderr)
	threshold := percent(5)
	flags.Var(&threshold, "threshold", "smallest change called better or worse, in `percent`")
	alpha := flags.Float64("alpha", benchmath.DefaultThresholds.CompareAlpha, "a change is significant when the U-test's p <= `α`")
	format := flags.String("format", "text", "output `format`: text (fits 100 columns) or markdown")
	flags.Usage = func() {
		fmt.Fprintln(stderr, "usage: kbcompare [flags] old.txt new.txt")
		flags.PrintDefaults()
	}
	if err := flags.Parse(args); err != nil {
		return 2
	}
	var render func(io.Writer, *Report) error
	switch *format {
	case "text":
		render = writeText
	case "markdown":
		render = writeMarkdown
	default:
		fmt.Fprintf(stderr, "kbcompare: -format accepts text or markdown, not %q\n", *format)
		return 2
	}
	if *alpha <= 0 || *alpha >= 1 {
		fmt.Fprintf(stderr, "kbcompare: -alpha accepts a number between 0 and 1, not %v\n", *alpha)
		return 2
	}
	if flags.NArg() != 2 {
		flags.Usage()
		return 2
	}
	rep, err := Compare(flags.Arg(0), flags.Arg(1), Options{Threshold: float64(threshold) / 100, Alpha: *alpha})
	if err != nil {
		fmt.Fprintf(stderr, "kbcompare: %v\n", err)
		return 2
	}
	if err := render(stdout, rep); err != nil {
		fmt.Fprintf(stderr, "kbcompare: %v\n", err)
		return 2
	}
	if rep.Count(Worse) > 0 || rep.Failures() > 0 {
		return 1
	}
	return 0
}
