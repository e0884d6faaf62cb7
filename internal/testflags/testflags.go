//go:build linux

// Package testflags reads the command lines of go test and of Go test
// binaries, and the testing package's -test.benchtime value, for the
// tools and the harness that pass or receive them: kbab writes go test's
// command line (it must know which arguments are packages, which flags
// it sets itself, and each boot's -count), vmexec receives a test
// binary's (-test.NAME=VALUE, to decide whether the binary has anything
// to run and which files it writes), and package rounds sizes its rounds
// by -test.benchtime. One reader, so that the three agree on what an
// argument means.
//
// A flag is "-name", "--name", "-name=value" or "--name=value", as the
// flag package reads it; a test binary's flags are go test's with the
// "test." prefix ("-test.count=3"), and go test takes either form for
// the testing package's flags, so Arg.Name holds the name without it.
// go test's arguments after -args (or --args) are the test binary's and
// are not read.
package testflags

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Arg is one argument of a command line.
type Arg struct {
	Text string // the argument as given
	// Flag: it starts with "-" (and is not "-" alone). The rest are a
	// flag's: Name without its dashes and without a "test." prefix,
	// Test whether it had the prefix, Value what follows the first "=",
	// HasValue whether there was one.
	Flag     bool
	Name     string
	Test     bool
	Value    string
	HasValue bool
}

// Parse reads one argument.
func Parse(a string) Arg {
	arg := Arg{Text: a}
	if len(a) < 2 || a[0] != '-' {
		return arg
	}
	arg.Flag = true
	s := a[1:]
	if s[0] == '-' {
		s = s[1:] // at most two dashes, as the flag package reads them
	}
	arg.Name, arg.Value, arg.HasValue = strings.Cut(s, "=")
	arg.Name, arg.Test = strings.CutPrefix(arg.Name, "test.")
	return arg
}

// Line is a go test command line: its arguments up to -args, read, and
// the test binary's arguments from -args on (Rest, with the -args).
type Line struct {
	Args []Arg
	Rest []string
}

// GoTest reads go test's arguments (packages and flags, in any order).
func GoTest(args []string) Line {
	var l Line
	for i, a := range args {
		if a == "-args" || a == "--args" {
			l.Rest = args[i:]
			break
		}
		l.Args = append(l.Args, Parse(a))
	}
	return l
}

// Sets reports whether the line sets flag name (in either form).
func (l Line) Sets(name string) bool {
	_, ok := l.Lookup(name)
	return ok
}

// Lookup is the last setting of flag name, as the flag package keeps
// the last: ok is false when the line does not set it.
func (l Line) Lookup(name string) (a Arg, ok bool) {
	for _, x := range l.Args {
		if x.Flag && x.Name == name {
			a, ok = x, true
		}
	}
	return a, ok
}

// Packages are the arguments that are not flags. A flag whose value is
// written as the next argument (-run X) is not known here: X is then
// taken for a package, which is why a caller that needs the packages
// refuses such flags (BoolFlag).
func (l Line) Packages() []string {
	var p []string
	for _, a := range l.Args {
		if !a.Flag {
			p = append(p, a.Text)
		}
	}
	return p
}

// goBoolFlags are go test's flags that take no value; testBoolFlags the
// testing package's (go test takes them without "test.").
var (
	goBoolFlags   = []string{"a", "asan", "cover", "msan", "race", "trimpath", "work", "x"}
	testBoolFlags = []string{"v", "failfast", "benchmem", "short", "paniconexit0", "fullpath"}
	// testValueFlags are the testing package's flags that take a value
	// (as a test binary gets them, -test.NAME=VALUE).
	testValueFlags = []string{"run", "bench", "skip", "count", "cpu", "timeout", "benchtime",
		"parallel", "testlogfile", "outputdir", "list", "fuzz", "fuzztime", "fuzzminimizetime",
		"fuzzcachedir", "shuffle", "memprofilerate", "blockprofilerate", "mutexprofilefraction",
		"cpuprofile", "memprofile", "blockprofile", "mutexprofile", "trace", "coverprofile", "gocoverdir"}
)

// BoolFlag reports whether go test's flag name (without "test.") takes
// no value, so that it may stand alone without its next argument being
// its value.
func BoolFlag(name string) bool {
	return slices.Contains(goBoolFlags, name) || slices.Contains(testBoolFlags, name)
}

// Binary reads a Go test binary's arguments as go test passes them
// (-test.NAME=VALUE; a bool flag may stand alone, meaning "true"): the
// value of each flag by name (without "test."). ok is false on any other
// argument: one that is not the testing package's, or a value flag
// without "=VALUE" (its value would be the next argument, which go test
// never writes).
func Binary(args []string) (flags map[string]string, ok bool) {
	flags = map[string]string{}
	for _, s := range args {
		a := Parse(s)
		known := slices.Contains(testValueFlags, a.Name) || slices.Contains(testBoolFlags, a.Name)
		if !a.Flag || !a.Test || !known {
			return nil, false
		}
		if !a.HasValue {
			if !slices.Contains(testBoolFlags, a.Name) {
				return nil, false
			}
			a.Value = "true"
		}
		flags[a.Name] = a.Value
	}
	return flags, true
}

// Count reads a -count value: a number of runs of 1 or more.
func Count(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("-count=%s: want a number of runs of 1 or more", v)
	}
	return n, nil
}

// Benchtime reads a -test.benchtime value by the testing package's
// rules, so that no value the testing package took is refused: a count
// of iterations above 0 with an x ("100x": fixed), or a duration above 0.
func Benchtime(s string) (fixed bool, d time.Duration, err error) {
	if n, ok := strings.CutSuffix(s, "x"); ok {
		if k, err := strconv.ParseInt(n, 10, 0); err != nil || k <= 0 {
			return false, 0, fmt.Errorf("-test.benchtime=%s is not a count of iterations such as 100x", s)
		}
		return true, 0, nil
	}
	d, err = time.ParseDuration(s)
	if err != nil || d <= 0 {
		return false, 0, fmt.Errorf("-test.benchtime=%s is neither a duration such as 1s nor a count such as 100x", s)
	}
	return false, d, nil
}
