//go:build linux

// Package lkpstat holds tests only: of the lkp-tests program in lkp/
// (programs/kbench: how kbench's rows are named as lkp-tests stats, and
// parse against its fixtures), and the direction lines lkp reads
// (etc/index-perf-all.yaml and etc/index-latency-all.yaml), made here from
// unit.Units, so that a unit added to the suite needs `go test
// ./internal/lkpstat -update` and no hand edit.
package lkpstat

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/kbench/kbench/internal/registry"
	"github.com/kbench/kbench/internal/unit"
)

// Program is kbench's name in lkp: its directory under programs/ and the
// prefix lkp's dump-stat puts before every stat parse prints.
const Program = "kbench"

// Builtin holds the units go test prints itself on every kbench row.
// B/op and allocs/op (-test.benchmem) measure the Go runtime, not the
// kernel, and lkp's run never asks for them, so they get no direction.
var Builtin = map[string]registry.Better{
	"ns/op": registry.Lower,
}

// Units returns every unit a kbench row reports, with its direction:
// Builtin and unit.Units, less the kernel counters (unit.Counters). Those
// are evidence beside a result, not a measure of its performance, so they
// get no direction line and count in no lkp index, as lkp's own
// perf-stat stats do not; parse still prints them as stats.
func Units() map[string]registry.Better {
	u := maps.Clone(unit.Units)
	for c := range unit.Counters {
		delete(u, c)
	}
	maps.Copy(u, Builtin)
	return u
}

// Key is the stat lkp records for a row's unit, as parse prints it with
// dump-stat's prefix: kbench.<package>.<row>.<unit>. The row is the
// benchmark's name without "Benchmark" and without the GOMAXPROCS suffix.
func Key(pkg, row, unit string) string {
	return Program + "." + pkg + "." + row + "." + unit
}

// timeUnit matches a unit whose numerator is a time: ns/op, p99-us,
// server-us/req, cpu-ns/op.
var timeUnit = regexp.MustCompile(`^([^/]*-)?(s|sec|ms|us|ns)(/|$)`)

// Latency reports whether a unit is a time per event where lower is
// better, the stats lkp keeps in etc/index-latency-all.yaml; every other
// unit goes to etc/index-perf-all.yaml.
func Latency(name string, better registry.Better) bool {
	return better == registry.Lower && timeUnit.MatchString(name)
}

// Line is one direction line of an lkp etc/index-*.yaml file: a regexp
// lkp anchors (^...$) against stat names, and its weight, whose sign is
// the direction (1 higher is better, -1 lower; latency lines weigh -0.1
// like the others in that file).
type Line struct {
	Pattern string
	Weight  string
	Unit    string
}

func (l Line) String() string { return l.Pattern + ": " + l.Weight }

// Pattern is the regexp that matches every row's stat in unit, escaped as
// lkp's files escape (a backslash before '.' and '/').
func Pattern(unit string) string {
	u := strings.ReplaceAll(regexp.QuoteMeta(unit), "/", `\/`)
	return regexp.QuoteMeta(Program+".") + `.+\.` + u
}

// Lines returns the direction lines of the two files, each sorted as lkp's
// spec wants (LC_ALL=C sort -f).
func Lines() (perf, latency []Line) {
	units := Units()
	for _, u := range slices.Sorted(maps.Keys(units)) {
		b := units[u]
		switch {
		case Latency(u, b):
			latency = append(latency, Line{Pattern(u), "-0.1", u})
		case b == registry.Higher:
			perf = append(perf, Line{Pattern(u), "1", u})
		case b == registry.Lower:
			perf = append(perf, Line{Pattern(u), "-1", u})
		default:
			panic(fmt.Sprintf("lkpstat: unit %q has direction %q", u, b))
		}
	}
	sortFold(perf)
	sortFold(latency)
	return perf, latency
}

// sortFold orders lines as `LC_ALL=C sort -f`: bytes with lower case
// folded to upper, ties broken by the plain bytes.
func sortFold(lines []Line) {
	slices.SortFunc(lines, func(a, b Line) int {
		if c := strings.Compare(strings.ToUpper(a.String()), strings.ToUpper(b.String())); c != 0 {
			return c
		}
		return strings.Compare(a.String(), b.String())
	})
}

// File returns the text of an etc/index-*.yaml snippet: one line each.
func File(lines []Line) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l.String() + "\n")
	}
	return b.String()
}
