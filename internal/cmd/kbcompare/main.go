//go:build linux

// Command kbcompare compares two kbench result files the way a kernel
// reviewer reads an lkp report: first what differs between the two
// machines' setups (the "# kbench" fingerprint lines and file
// configuration), then, per benchmark and unit, the base and new medians
// with their 95% confidence intervals, the change, the Mann-Whitney U
// p-value and a verdict that knows which direction of each unit is better.
//
//	go run ./internal/cmd/kbcompare [-threshold 5%] [-alpha 0.05] [-format text|markdown|json|csv] [-plot DIR] old.txt new.txt
//	go run ./internal/cmd/kbcompare -bisect [-row REGEXP] good.txt bad.txt candidate.txt
//
// docs/kbcompare.md describes the json and csv schema, the pictures of
// -plot and a `git bisect run` recipe for -bisect.
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
// medians are compared with Welch's t-test (go-moremath's, the library
// benchmath is built on) on their logs, n counts boots,
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
// threshold in size; otherwise "~", or "underpowered" where the
// comparison could not have seen a change of threshold: "~" then is no
// evidence of no change, only of no evidence. Each compared row shows its
// minimum detectable effect (mde: the change the test it used detects at
// alpha with 80% power, given the spread it saw and its n) and how many
// boots, or samples, a side would need to detect threshold:
//
//   - Boots as samples (Welch's t-test on logs of boot medians, spread s
//     the pooled standard deviation of those logs, n1 and n2 boots):
//     mde = exp(ncp·s·√(1/n1 + 1/n2)) - 1, ncp the noncentrality at
//     which the test passes p <= alpha with 80% chance, computed as
//     E_B[P(|(Z + ncp)/√(V/df)| > t(1-α/2, dfW(B)))], V chi-squared on
//     df = n1+n2-2 and dfW Welch's degrees of freedom, which depend only
//     on B = V1/(V1+V2) ~ Beta((n1-1)/2, (n2-1)/2) (exact for equal
//     boots a side; with more than 30 a side, ncp = t(1-α/2, df) +
//     t(0.8, df)). For 3+3 boots ncp is 4.30: a between-boot spread of
//     ±1% can see 3.6%.
//   - Per sample (Mann-Whitney U on the samples): mde = exp(δ) - 1, δ
//     the shift of logs at which the power is 80%, by the normal
//     approximation of U under the alternative: power =
//     Φ((n1·n2·|p - 1/2| - z(1-α/2)·σ0)/σ1), σ0² = n1·n2·(n1+n2+1)/12,
//     σ1² = n1·n2·(p(1-p) + (n2-1)(p2 - p²) + (n1-1)(p3 - p²)), where
//     p = P(X < Y), p2 = P(X < Y, X < Y'), p3 = P(X < Y, X' < Y) for X,
//     X' drawn from the residuals (each sample's log less its side's
//     median, both sides pooled) and Y, Y' from the residuals moved by δ:
//     the spread the test sees, outliers and all. δ stops at the
//     residuals' range (the ranks then separate completely), and mde is
//     infinite where 2/C(n1+n2, n1) > alpha (no ranks can reach it).
//
// Where a value is <= 0 the same holds for values relative to the
// center instead of logs. The tests check both by simulation on the real
// fixtures: a change of the reported mde is flagged in about 80% of
// resamplings.
//
// Units are lower-is-better for sec/op, B/op and allocs/op,
// higher-is-better for B/s, and follow `Unit <unit> better=higher|lower`
// metadata lines otherwise. A large significant
// change in a unit without a direction is "changed", and a benchmark or
// unit that only one file has is "old only" or "new only"; neither fails.
// A row for which go test printed `--- FAIL` is "FAILED" (in both of its
// forms: on a line of its own, and on the row's name line when the row
// failed after go test printed the name, as a b.Fatal after the first
// iteration does), one that a side
// lacks because it printed `--- SKIP` for it there (go test -v) is
// "skipped", and failed benchmarks without rows and failed test binaries
// are listed: none of them is ever "nothing worse".
//
// Each table ends, as benchstat's do, with the geometric mean of its
// rows' centers on each side (over the rows both sides hold and neither
// failed) and its change: one line per package and unit, so times and
// rates are summarised apart.
//
// With -bisect GOOD BAD CANDIDATE, kbcompare is a `git bisect run`
// verdict: for the one benchmark the three files share (or the one -row
// names) and each of its units where BAD differs from GOOD, the
// candidate is like GOOD when it differs from BAD towards GOOD and not
// from GOOD towards BAD, like BAD the other way round, and "cannot tell"
// otherwise (both: between the two; neither: too noisy, with its mde).
// Where BAD failed the row and GOOD did not, a candidate that fails it
// is like BAD and one that passes it like GOOD.
// It prints one line saying which and why, and exits 0 (like GOOD), 1
// (like BAD), 125 (cannot tell, or the candidate's row failed: git bisect
// skips the commit) or 128 (nothing to bisect by: unreadable input, bad
// flags, GOOD like BAD, several benchmarks and no -row; git bisect
// stops). docs/kbcompare.md has a recipe.
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
	"slices"
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
	format := flags.String("format", "text", "output `format`: text (fits 100 columns), markdown, json or csv (docs/kbcompare.md)")
	flags.Usage = func() {
		fmt.Fprintln(stderr, "usage: kbcompare [flags] old.txt new.txt")
		flags.PrintDefaults()
	}
	bisect := flags.Bool("bisect", false, "judge CANDIDATE against GOOD and BAD for git bisect run: exit 0 like GOOD, 1 like BAD, 125 cannot tell, 128 cannot bisect")
	plotDir := flags.String("plot", "", "also draw, into `dir`, a picture per row that changed or is underpowered, an overview and index.md")
	rowPattern := flags.String("row", "", "with -bisect: the benchmark to judge, a `regexp` matched against package/name")
	if err := flags.Parse(args); err != nil {
		if slices.Contains(args, "-bisect") || slices.Contains(args, "--bisect") {
			return bisectAbort // 2 would read as "bad" to git bisect
		}
		return 2
	}
	var render func(io.Writer, *Report) error
	switch *format {
	case "text":
		render = writeText
	case "markdown":
		render = writeMarkdown
	case "json":
		render = writeJSON
	case "csv":
		render = writeCSV
	default:
		fmt.Fprintf(stderr, "kbcompare: -format accepts text, markdown, json or csv, not %q\n", *format)
		return 2
	}
	if *alpha <= 0 || *alpha >= 1 {
		fmt.Fprintf(stderr, "kbcompare: -alpha accepts a number between 0 and 1, not %v\n", *alpha)
		if *bisect {
			return bisectAbort
		}
		return 2
	}
	opts := Options{Threshold: float64(threshold) / 100, Alpha: *alpha}
	if *bisect {
		return runBisect(flags.Args(), opts, *rowPattern, stdout, stderr)
	}
	if *rowPattern != "" {
		fmt.Fprintln(stderr, "kbcompare: -row goes with -bisect")
		return 2
	}
	if flags.NArg() != 2 {
		flags.Usage()
		return 2
	}
	rep, err := Compare(flags.Arg(0), flags.Arg(1), opts)
	if err != nil {
		fmt.Fprintf(stderr, "kbcompare: %v\n", err)
		return 2
	}
	if err := render(stdout, rep); err != nil {
		fmt.Fprintf(stderr, "kbcompare: %v\n", err)
		return 2
	}
	if *plotDir != "" {
		if err := writePlots(*plotDir, rep); err != nil {
			fmt.Fprintf(stderr, "kbcompare: -plot: %v\n", err)
			return 2
		}
	}
	return exitStatus(rep)
}

// exitStatus is 1 where some row is worse or something failed, else 0.
func exitStatus(rep *Report) int {
	if rep.Count(Worse) > 0 || rep.Failures() > 0 {
		return 1
	}
	return 0
}
