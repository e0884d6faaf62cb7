//go:build linux

package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/kbench/kbench/internal/abseries"
	"github.com/kbench/kbench/internal/kernelbuild"
	"github.com/kbench/kbench/internal/percent"
	"github.com/kbench/kbench/internal/testflags"
	"github.com/kbench/kbench/internal/vmflags"
)

// config is the command line, checked.
type config struct {
	// settings are the options a resume must repeat (its Dir, Kernels
	// and Env newSettings fills).
	settings
	out     string
	kernels []kernelFlags
	vmexec  string        // "" builds it from the module
	budget  time.Duration // where > 0, bounds a planned run
	src     treeFlags     // -tree: kernels built from commits (source.go)
}

// kernelFlags are one kernel as given: its label, image and cmdline,
// and what gave it, for messages ("-a-kernel", "LIST line 3").
type kernelFlags struct {
	label, image, append, from string
	build                      *kernelbuild.Build // with -tree (source.go)
}

var errHelp = errors.New("help requested")

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	// An A/B's kernels; a list's replace them (pickDesign).
	c := &config{kernels: []kernelFlags{{label: "A", from: "-a-kernel"}, {label: "B", from: "-b-kernel"}}}
	a, b := &c.kernels[0], &c.kernels[1]
	fs := flag.NewFlagSet("kbab", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.out, "out", "", "output `dir`ectory: A.txt, B.txt, boots/, report.txt and the resume state kbab.json")
	fs.StringVar(&a.image, "a-kernel", "", "kernel A's `image` (bzImage or vmlinuz)")
	fs.StringVar(&a.append, "a-append", "", "kernel A's extra `cmdline` arguments")
	fs.StringVar(&b.image, "b-kernel", "", "kernel B's `image` (may be A's, with another -b-append)")
	fs.StringVar(&b.append, "b-append", "", "kernel B's extra `cmdline` arguments")
	fs.IntVar(&c.Boots, "boots", 3, "boots of each kernel (kbcompare uses boots as samples from 3 a side; a series' default is abseries' 5)")
	fs.StringVar(&c.List, "series", "", "boot the kernels of this `list` file (a line a kernel: LABEL IMAGE [cmdline args...]) -boots times each, in a balanced order, and report their change points")
	bisect := fs.String("bisect", "", "bisect the kernels of this `list` file, ordered good (first) to bad (last), on the -row: confirm good and bad differ (a planned A/B at -target), then boot middle images until the first bad one is found")
	fs.StringVar(&c.Row, "row", "", "with -bisect: the row to bisect on, a `regexp` matching exactly one row's name (benchstat's, such as Load/shape=stress-ng/loaders=1-2)")
	fs.StringVar(&c.SMP, "smp", "", "vmexec -smp: guest `vCPUs` (unset: vmexec's default)")
	fs.StringVar(&c.Memory, "memory", "", "vmexec -memory: guest memory `size` such as 2G or 2048M, at least 128M (unset: vmexec's default)")
	fs.StringVar(&c.Accel, "accel", "", "vmexec -accel: auto, kvm or tcg (unset: vmexec's default)")
	fs.StringVar(&c.vmexec, "vmexec", "", "prebuilt vmexec `path` (unset: go build from the module into -out/bin)")
	fs.Var(percent.Value{Fraction: &c.Target, Kind: percent.Effect}, "target", "plan the boots by Stein's two-stage test: a pilot of 6 boots a side at one -count, then boots of only the rows that need them, so that a change of this `percent`age (5%) is called worse in at least 80% of runs")
	fs.DurationVar(&c.budget, "budget", 0, "with -target: after the pilot (which always runs), plan and run no boots past this `duration`, counted as A's boot times doubled (0: no bound); rows that do not fit get no verdict, named in the report")
	fs.IntVar(&c.Profile, "profile", 0, "after the timed boots, this `number` of profile boots a side (3 or more; 0: none), each the same go test with KBENCH_PROFILE, for the report's perf-profile section")
	fs.BoolVar(&c.Duet, "duet", false, "boot A and B at once, in pairs, each guest on its own half of the CPUs kbab may use (swapped pair to pair), each package's go test started in both at once; rows are judged by their pairs (-boots pairs, or -target's plan)")
	fs.StringVar(&c.src.tree, "tree", "", "kernel source `dir`ectory (a git repository, only read): -a-kernel and -b-kernel are then revisions, -series and -bisect a range GOOD..BAD, built by kbuild")
	fs.StringVar(&c.src.config, "config", "defconfig", "with -tree: the base `config` (defconfig, running, or a file) kbuild merges the guest's and the suite's options into")
	fs.StringVar(&c.src.cache, "build-cache", "", "with -tree: kbuild's cache `dir`ectory (default the user's cache dir's kbench/kbuild)")
	fs.StringVar(&c.src.patch[0], "a-patch", "", "with -tree: a patch `file` applied on kernel A's commit")
	fs.StringVar(&c.src.patch[1], "b-patch", "", "with -tree: a patch `file` applied on kernel B's commit (the same as A's: base against base plus patch)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: kbab -out DIR -a-kernel IMAGE [-a-append ARGS] -b-kernel IMAGE [-b-append ARGS] [flags] -- PACKAGES [go test flags]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, errHelp
		}
		return nil, err // the flag package has printed what is wrong
	}
	c.GoTest = fs.Args()
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if err := c.pickDesign(*bisect, given); err != nil {
		return nil, err
	}
	if err := c.resolveTree(given); err != nil {
		return nil, err
	}
	if err := c.check(); err != nil {
		return nil, err
	}
	return c, c.buildAll(stderr)
}

// optionRule is the designs an option goes with, and what to say.
type optionRule struct {
	designs []string
	with    string
}

var abOnly = optionRule{[]string{"fixed", "planned"}, "an A/B: a kernel list (-series, -bisect) gives the kernels, booted one at a time"}

var optionRules = map[string]optionRule{
	"a-kernel": abOnly, "a-append": abOnly, "b-kernel": abOnly, "b-append": abOnly, "profile": abOnly, "duet": abOnly,
	"row":    {[]string{"bisect"}, "-bisect: it names the row to bisect on"},
	"target": {[]string{"planned", "bisect"}, "an A/B or -bisect: a series boots each kernel -boots times"},
	"budget": {[]string{"planned", "bisect"}, "-target or -bisect: it bounds a planned run"},
	"boots":  {[]string{"fixed", "series"}, "a fixed A/B or -series: -target and -bisect plan the boots"},
}

// pickDesign chooses the design, refuses an option it does not take,
// and reads the kernels.
func (c *config) pickDesign(bisect string, given map[string]bool) error {
	switch {
	case c.List != "" && bisect != "":
		return errors.New("-series and -bisect exclude each other: a series reports change points, a bisection searches one row")
	case c.List != "":
		c.Design = "series"
	case bisect != "":
		c.Design, c.List = "bisect", bisect
	case c.Target > 0:
		c.Design = "planned"
	default:
		c.Design = "fixed"
	}
	for _, f := range slices.Sorted(maps.Keys(given)) {
		if r, ok := optionRules[f]; ok && !slices.Contains(r.designs, c.Design) {
			return fmt.Errorf("-%s goes with %s", f, r.with)
		}
	}
	switch c.Design {
	case "fixed", "planned":
		return nil
	case "series":
		if !given["boots"] {
			c.Boots = abseries.DefaultBoots
		}
	case "bisect":
		if c.Row == "" {
			return errors.New("-bisect needs -row: the row to bisect on, a regexp matching one row's name")
		}
		if _, err := regexp.Compile(c.Row); err != nil {
			return fmt.Errorf("-row %s: %v", c.Row, err)
		}
		c.Target = cmp.Or(c.Target, defaultBisectTarget)
	}
	ks, err := c.readKernels()
	if err != nil {
		return err
	}
	if c.Design == "bisect" && len(ks) < 3 {
		return fmt.Errorf("-bisect %s: %d kernels: want a good one, a bad one and at least one image between them", c.List, len(ks))
	}
	c.kernels = ks
	if c.Design == "series" {
		return reachable(len(ks), c.Boots)
	}
	return nil
}

// reachable refuses a series whose boots cannot give a row alone a p at
// the level (abseries.MinP), naming the boots that would.
func reachable(kernels, boots int) error {
	n, alpha := kernels*boots, abseries.DefaultOptions.Alpha
	p := abseries.MinP(n, boots*(kernels/2))
	if p <= alpha {
		return nil
	}
	more := boots
	for abseries.MinP(kernels*more, more*(kernels/2)) > alpha {
		more++
	}
	return fmt.Errorf("-boots %d over %d kernels: the smallest p a permutation of a row's boots can give a change is %.2g, above the level %g, so no change could be found; -boots %d reaches it (a family of rows needs more: the report names each row that cannot)",
		boots, kernels, p, alpha, more)
}

// defaultBisectTarget is -bisect's -target where none is given.
const defaultBisectTarget = 0.05

// check names the first bad option and what it accepts.
func (c *config) check() error {
	switch {
	case c.out == "":
		return errors.New("-out is required: the directory for A.txt, B.txt and the resume state")
	case c.List == "" && c.kernels[0].image == "":
		return errors.New("-a-kernel is required: kernel A's image (or -series LIST, -bisect LIST for more kernels)")
	case c.List == "" && c.kernels[1].image == "":
		return errors.New("-b-kernel is required: kernel B's image (the same as -a-kernel for a cmdline A/B)")
	case c.Boots < 1:
		return fmt.Errorf("-boots %d: want a number of boots of each kernel >= 1 (3 or more for boots as samples)", c.Boots)
	}
	// By vmexec's own rules, before any build or boot.
	if err := vmflags.Check(c.SMP, c.Memory, c.Accel); err != nil {
		return err
	}
	for _, k := range c.kernels {
		app, img := k.from+"'s cmdline", k.from
		if c.List == "" {
			app = "-" + strings.ToLower(k.label) + "-append"
		}
		if err := vmflags.Append(app, k.append, vmflags.MaxAppend); err != nil {
			return err
		}
		if k.build == nil { // a commit's is checked once built
			if err := vmflags.Kernel(img, k.image); err != nil {
				return err
			}
		}
		for _, v := range []struct{ name, v string }{{img, k.image}, {app, k.append}} {
			if strings.Contains(v.v, "'") && strings.Contains(v.v, `"`) {
				return fmt.Errorf("%s %s: holds both ' and \", which go test -exec cannot quote", v.name, v.v)
			}
		}
	}
	switch {
	case len(c.GoTest) == 0:
		return errors.New("no packages: give go test's packages and flags after the options, e.g. -- ./seccompbench -run='^$' -bench=Load")
	case c.budget < 0:
		return fmt.Errorf("-budget %s: want a duration >= 0", c.budget)
	case c.Duet && c.Profile > 0:
		return errors.New("-duet and -profile exclude each other: profile boots run one at a time")
	case c.Profile < 0 || c.Profile > 0 && c.Profile < profileMin:
		return fmt.Errorf("-profile %d: want 0 (no profile boots) or %d or more profile boots a side: the boots are the samples of the section's spread", c.Profile, profileMin)
	case c.Profile > 0 && os.Getenv("KBENCH_PROFILE") != "":
		return fmt.Errorf("-profile with KBENCH_PROFILE=%s in the environment: kbab sets KBENCH_PROFILE for the profile boots alone (a timed boot with it is slowed); unset it", os.Getenv("KBENCH_PROFILE"))
	}
	if c.Duet {
		if _, err := duetCPUs(c.SMP); err != nil {
			return err
		}
	}
	if c.Target > 0 || c.Duet {
		if _, _, err := splitGoTest(c.GoTest); err != nil {
			return err
		}
	}
	for _, a := range testflags.GoTest(c.GoTest).Args {
		// test.NAME is the testing package's, none of these.
		if why := refusedGoTest[a.Name]; a.Flag && !a.Test && why != "" {
			return fmt.Errorf("go test flag %s: %s", a.Text, why)
		}
	}
	return nil
}

// refusedGoTest are the go test flags kbab refuses, and why.
var refusedGoTest = map[string]string{
	"exec": "kbab sets -exec to vmexec; use -smp, -memory and -accel for the guest",
	"json": "kbcompare reads go test's text output, not -json",
	"c":    runsTests, "i": runsTests, "n": runsTests,
}

const runsTests = "kbab needs go test to run the tests in each boot"

// splitGoTest is go test's flags for -target and -duet, which run each
// package on its own: all but -bench, -count (count, 0 where none: every
// boot's) and the packages. A flag with a value must be -flag=value, so
// that a value is never taken for a package.
func splitGoTest(goTest []string) (flags []string, count int, err error) {
	line := testflags.GoTest(goTest)
	for _, a := range line.Args {
		switch {
		case !a.Flag:
			continue
		case a.Name == "count":
			if count, err = testflags.Count(a.Value); err != nil || !a.HasValue {
				return nil, 0, fmt.Errorf("go test flag %s: with -target or -duet, -count=N with N of 1 or more: every boot of the design runs at it", a.Text)
			}
			continue
		case !a.HasValue && !testflags.BoolFlag(a.Name):
			return nil, 0, fmt.Errorf("go test flag %s: with -target or -duet write it as %s=VALUE, so that its value is not taken for a package", a.Text, a.Text)
		case a.Name == "bench":
			continue // the pilot's is the user's; later boots build their own
		}
		flags = append(flags, a.Text)
	}
	if len(line.Packages()) == 0 {
		return nil, 0, errors.New("-target, -duet: no packages among go test's arguments")
	}
	return append(flags, line.Rest...), count, nil
}

// quote makes s one field of go test's -exec ('...' or "...", no escapes).
func quote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n\r'\"") {
		return s
	}
	if !strings.Contains(s, "'") {
		return "'" + s + "'"
	}
	return `"` + s + `"`
}
