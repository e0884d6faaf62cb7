//go:build linux

// Command reportcheck checks a kbcompare -format json report against what
// a CI check expects of it, on the report's fields, so that no check in
// .ci/ decides on the words of the text report (issue 37):
//
//	kbcompare -format json OLD NEW | reportcheck [flags] -
//	reportcheck -worse 'seccompbench Syscall/' -rate loops/s -setup inject.seccomp REPORT.json
//
// Every check given must hold: -worse names a row (a regular expression
// matched against "package name") whose verdict in -unit is worse; -rate
// the rate derived from that row, worse with it; -up one of
// that row's kernel counters that kbcompare lists as up under it;
// -boots the boots a side, with boots as the samples; -setup a
// setup line that differs between the sides. The exit status is 0 when
// all hold, 1 when one does not (each failed check is printed), 2 for
// bad usage or a report that cannot be read.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// report is the part of kbcompare's JSON report (schema kbcompare/3 or
// /2, which agree on it; docs/kbcompare.md) that the checks read.
type report struct {
	Schema string `json:"schema"`
	Boots  struct {
		Old int `json:"old"`
		New int `json:"new"`
	} `json:"boots"`
	BootMode bool        `json:"boot_mode"`
	Setup    []setupDiff `json:"setup"`
	Rows     []row       `json:"rows"`
}

// setupDiff is a setup line that differs between the sides.
type setupDiff struct {
	Key string `json:"key"`
}

type row struct {
	Package string `json:"package"`
	Name    string `json:"name"`
	Unit    string `json:"unit"`
	Role    string `json:"role"` // primary, derived or evidence
	Verdict string `json:"verdict"`
	// Counters are the kernel counters listed under a primary row, each
	// up, down or ~ (evidence, never the row's verdict).
	Counters []counter `json:"counters"`
}

// counter is a kernel counter under a row: up, down or ~.
type counter struct {
	Unit    string `json:"unit"`
	Verdict string `json:"verdict"`
}

// checks are the command line's expectations.
type checks struct {
	worse      *regexp.Regexp
	unit, rate string
	up         string
	boots      int
	setup      string
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("reportcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c checks
	worse := fs.String("worse", "", "a `regexp` matched against a row's \"package name\": some such row must be worse in -unit")
	fs.StringVar(&c.unit, "unit", "sec/op", "the `unit` -worse judges the row in")
	fs.StringVar(&c.rate, "rate", "", "with -worse: the row's derived rate `unit` (loops/s) must be worse with it")
	fs.StringVar(&c.up, "up", "", "with -worse: the row's kernel counter `unit` (cpu-sec/op) must be up under it")
	fs.IntVar(&c.boots, "boots", 0, "the boots a `side` must be this many, as the samples (0: not checked)")
	fs.StringVar(&c.setup, "setup", "", "a setup `key` that must differ between the sides (inject.seccomp)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: reportcheck [flags] REPORT.json|-")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	if *worse != "" {
		re, err := regexp.Compile(*worse)
		if err != nil {
			fmt.Fprintf(stderr, "reportcheck: -worse accepts a regular expression: %v\n", err)
			return 2
		}
		c.worse = re
	} else if c.rate != "" || c.up != "" {
		fmt.Fprintln(stderr, "reportcheck: -rate and -up go with -worse: they are that row's")
		return 2
	}
	in := stdin
	if name := fs.Arg(0); name != "-" {
		f, err := os.Open(name)
		if err != nil {
			fmt.Fprintln(stderr, "reportcheck:", err)
			return 2
		}
		defer f.Close()
		in = f
	}
	rep, err := read(in)
	if err != nil {
		fmt.Fprintln(stderr, "reportcheck:", err)
		return 2
	}
	failed := c.check(rep)
	for _, f := range failed {
		fmt.Fprintln(stdout, "reportcheck: FAIL:", f)
	}
	if len(failed) > 0 {
		return 1
	}
	return 0
}

// read decodes a report of kbcompare's schema.
func read(r io.Reader) (*report, error) {
	var rep report
	if err := json.NewDecoder(r).Decode(&rep); err != nil {
		return nil, fmt.Errorf("not a kbcompare JSON report: %v", err)
	}
	if !strings.HasPrefix(rep.Schema, "kbcompare/") {
		return nil, errors.New("not a kbcompare JSON report: no kbcompare schema")
	}
	return &rep, nil
}

// check returns each expectation that rep does not meet.
func (c checks) check(rep *report) []string {
	var failed []string
	if c.boots > 0 && (!rep.BootMode || rep.Boots.Old != c.boots || rep.Boots.New != c.boots) {
		failed = append(failed, fmt.Sprintf("boots: old %d, new %d, as samples %v; want %d a side as the samples", rep.Boots.Old, rep.Boots.New, rep.BootMode, c.boots))
	}
	if c.setup != "" && !slices.ContainsFunc(rep.Setup, func(d setupDiff) bool { return d.Key == c.setup }) {
		failed = append(failed, fmt.Sprintf("setup: %s does not differ between the sides", c.setup))
	}
	if c.worse == nil {
		return failed
	}
	var names []string // the worse rows' package and name
	for _, r := range rep.Rows {
		if r.Role == "primary" && r.Unit == c.unit && r.Verdict == "worse" && c.worse.MatchString(r.Package+" "+r.Name) {
			names = append(names, r.Package+" "+r.Name)
		}
	}
	if len(names) == 0 {
		return append(failed, fmt.Sprintf("no row matching %q is worse in %s", c.worse, c.unit))
	}
	of := func(name string, keep func(row) bool) bool {
		return slices.ContainsFunc(rep.Rows, func(r row) bool { return r.Package+" "+r.Name == name && keep(r) })
	}
	for _, name := range names {
		if c.rate != "" && !of(name, func(r row) bool { return r.Role == "derived" && r.Unit == c.rate && r.Verdict == "worse" }) {
			failed = append(failed, fmt.Sprintf("%s: worse in %s, but its %s is not worse with it", name, c.unit, c.rate))
		}
		if c.up != "" && !of(name, func(r row) bool {
			return r.Role == "primary" && r.Unit == c.unit && slices.ContainsFunc(r.Counters, func(k counter) bool { return k.Unit == c.up && k.Verdict == "up" })
		}) {
			failed = append(failed, fmt.Sprintf("%s: worse in %s, but its kernel counter %s is not up", name, c.unit, c.up))
		}
	}
	return failed
}
