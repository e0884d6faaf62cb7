//go:build linux

// Command benchcheck checks a smoke run of the suite: the output must read
// as result files do (internal/abfile: benchfmt's syntax, every result a
// measurement), and every sub-benchmark named in the
// expectation file must have a result row (and no row may be unlisted, so
// the list stays true). CI runs it on `go test -bench=. -benchtime=100x`.
//
// Usage: benchcheck -expect .ci/benchmarks.txt smoke.txt
//
// The expectation file has one "package Name/key=value/..." per line, as
// benchfmt names results without the "Benchmark" prefix and the -N
// GOMAXPROCS suffix; a leading "? " marks a row that may be skipped on a
// machine without the feature: it must then leave its skip line (package
// skip), which says why, and a row that neither ran nor left one is a
// problem. '#' starts a comment. Every row must also report the kernel counters its test
// binary's fingerprint says were counted (package counters).
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/kbench/kbench/internal/abfile"
)

func main() {
	expect := flag.String("expect", "", "expectation file")
	flag.Parse()
	if *expect == "" || flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: benchcheck -expect FILE RESULTS")
		os.Exit(2)
	}
	want, err := readExpect(*expect)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchcheck:", err)
		os.Exit(2)
	}
	f, err := os.Open(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchcheck:", err)
		os.Exit(2)
	}
	defer f.Close()
	problems, rows, err := check(f, flag.Arg(0), want)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchcheck:", err)
		os.Exit(2)
	}
	for _, p := range problems {
		fmt.Println("benchcheck:", p)
	}
	if len(problems) > 0 {
		os.Exit(1)
	}
	fmt.Printf("benchcheck: %d result rows, all %d expected sub-benchmarks present\n", rows, len(want))
}

// expectation is one line of the expectation file.
type expectation struct {
	optional bool
}

func readExpect(file string) (map[string]expectation, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	want := map[string]expectation{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		var e expectation
		if rest, ok := strings.CutPrefix(line, "? "); ok {
			e.optional, line = true, strings.TrimSpace(rest)
		}
		if len(strings.Fields(line)) != 2 {
			return nil, fmt.Errorf("%s:%d: want \"package Name\", got %q", file, n, line)
		}
		want[strings.Join(strings.Fields(line), " ")] = e
	}
	return want, sc.Err()
}

// check returns the problems found in a result stream, read with
// internal/abfile: an expected row must have a result, or, if optional,
// leave its skip line (package skip), which says why it skipped; every
// row must report its binary's counters (checkCounters).
func check(r io.Reader, name string, want map[string]expectation) ([]string, int, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, 0, err
	}
	files, _, err := abfile.ReadData([]string{name}, [][]byte{data})
	if err != nil {
		return []string{err.Error()}, 0, nil
	}
	f := files[0]
	var problems []string
	seen := map[string]bool{}
	for _, res := range f.Results {
		key := path.Base(res.Config["pkg"]) + " " + abfile.WithoutProcs(res.Name)
		seen[key] = true
		if _, ok := want[key]; !ok {
			problems = append(problems, fmt.Sprintf("unexpected row %q: not in the expectation file (.ci/benchmarks.txt: add the row to internal/registry, then go test ./internal/registry -update)", key))
		}
	}
	// skipped returns the reason of the skip of row key, or of a parent.
	skipped := func(key string) (string, bool) {
		for _, o := range f.Outcomes {
			s := path.Base(o.Pkg) + " " + abfile.WithoutProcs(strings.TrimPrefix(o.Name, "Benchmark"))
			if o.Kind == abfile.Skipped && (key == s || strings.HasPrefix(key, s+"/")) {
				return o.Reason, true
			}
		}
		return "", false
	}
	var keys []string
	for k := range want {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if seen[k] {
			continue
		}
		why, skip := skipped(k)
		switch {
		case !want[k].optional && skip:
			problems = append(problems, fmt.Sprintf("no result row for %q: it skipped: %s", k, why))
		case !want[k].optional:
			problems = append(problems, fmt.Sprintf("no result row for %q", k))
		case !skip:
			problems = append(problems, fmt.Sprintf("no result row for %q and no skip line: a row marked \"? \" may skip, leaving its line (package skip)", k))
		}
	}
	if len(f.Results) == 0 {
		problems = append(problems, "no result rows at all")
	}
	problems = append(problems, checkCounters(f)...)
	return slices.Compact(problems), len(f.Results), nil
}
