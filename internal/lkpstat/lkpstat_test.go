//go:build linux

package lkpstat

import (
	"bufio"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/registry"
)

// lkpDir is the lkp folder from this package's directory.
const lkpDir = "../../lkp"

// indexLine is a direction line as read back from a committed file.
type indexLine struct {
	file, pattern string
	weight        float64
	re            *regexp.Regexp
}

// readIndex reads lkp/etc/<name> the way lkp loads it: "regexp: weight",
// the regexp anchored at both ends.
func readIndex(t *testing.T, name string) []indexLine {
	t.Helper()
	f, err := os.Open(filepath.Join(lkpDir, "etc", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []indexLine
	s := bufio.NewScanner(f)
	for s.Scan() {
		pat, w, ok := strings.Cut(s.Text(), ": ")
		if !ok {
			t.Fatalf("%s: %q is not 'regexp: weight'", name, s.Text())
		}
		weight, err := strconv.ParseFloat(w, 64)
		if err != nil || weight == 0 {
			t.Fatalf("%s: %q: weight %q is not a non-zero number", name, s.Text(), w)
		}
		re, err := regexp.Compile("^(?:" + pat + ")$")
		if err != nil {
			t.Fatalf("%s: %q: %v", name, pat, err)
		}
		lines = append(lines, indexLine{name, pat, weight, re})
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

var update = flag.Bool("update", false, "write lkp/etc's direction lines from the suite's units")

// The committed direction lines are those Lines makes now; -update
// writes them.
func TestIndexFiles(t *testing.T) {
	perf, latency := Lines()
	for name, lines := range map[string][]Line{"index-perf-all.yaml": perf, "index-latency-all.yaml": latency} {
		b := registry.Block{Path: filepath.Join("etc", name), Text: File(lines)}
		if err := b.Sync(lkpDir, *update); err != nil {
			t.Errorf("%v\ngo test ./internal/lkpstat -update writes the lines", err)
		}
	}
}

func committedLines(t *testing.T) []indexLine {
	return append(readIndex(t, "index-perf-all.yaml"), readIndex(t, "index-latency-all.yaml")...)
}

// sampleKeys are stats parse prints for a unit, with row names of the
// shapes kbench uses (parameters, dashes, digits, dots).
func sampleKeys(unit string) []string {
	return []string{
		Key("seccompbench", "Syscall/work=getpid/kind=cached/filters=0", unit),
		Key("netbench", "TCPCRR/ip=4/flows=16/req=1/rsp=1", unit),
		Key("sockfdbench", "Sockfd/shape=stress-ng/kind=file/fds=1/run=parallel-4", unit),
		Key("x", "Y/size=1.5", unit),
	}
}

// Every unit of the suite has exactly one direction line, in the right
// direction, and every committed line matches some unit: a unit added
// to unit.Units without rerunning the generator fails here.
func TestIndexLinesCoverUnits(t *testing.T) {
	lines := committedLines(t)
	used := make([]bool, len(lines))
	for u, better := range Units() {
		for _, key := range sampleKeys(u) {
			var hits []int
			for i, l := range lines {
				if l.re.MatchString(key) {
					hits = append(hits, i)
				}
			}
			if len(hits) != 1 {
				t.Errorf("unit %s: stat %s matches %d direction lines, want 1 (go test ./internal/lkpstat -update writes the lines)", u, key, len(hits))
				continue
			}
			l := lines[hits[0]]
			used[hits[0]] = true
			if (l.weight > 0) != (better == registry.Higher) {
				t.Errorf("unit %s (better=%s): %s says %v", u, better, l.file, l.weight)
			}
			if wantLatency := Latency(u, better); wantLatency != (l.file == "index-latency-all.yaml") {
				t.Errorf("unit %s: in %s, latency=%v", u, l.file, wantLatency)
			}
		}
	}
	for i, l := range lines {
		if !used[i] {
			t.Errorf("%s: line %q matches no unit of the suite (go test ./internal/lkpstat -update writes the lines)", l.file, l.pattern)
		}
	}
}

// The pass and fail stats parse prints are lkp function stats: no
// direction line may take them for a performance stat, and no unit may
// read as one (lkp's etc/failure and etc/pass patterns, copied).
func TestFunctionStats(t *testing.T) {
	failure := regexp.MustCompile(`^.+\.(error|warn|fail)[^_]*$`)
	pass := regexp.MustCompile(`^.+\.pass$`)
	lines := committedLines(t)
	for _, key := range []string{Key("seccompbench", "Load/shape=stress-ng/loaders=1", "fail"), Key("seccompbench", "Load", "pass")} {
		if !failure.MatchString(key) && !pass.MatchString(key) {
			t.Errorf("%s is no function stat for lkp", key)
		}
		for _, l := range lines {
			if l.re.MatchString(key) {
				t.Errorf("%s matches direction line %q", key, l.pattern)
			}
		}
	}
	for unit := range Units() {
		for _, key := range sampleKeys(unit) {
			if failure.MatchString(key) || pass.MatchString(key) {
				t.Errorf("unit %s: lkp would take %s for a pass/fail stat", unit, key)
			}
		}
	}
}

func TestLatency(t *testing.T) {
	for u, want := range map[string]bool{
		"ns/op": true, "p99-us": true, "p50-us/batch": true, "server-us/req": true,
		"cpu-ns/op": true, "sec/op": true,
		"ops/s": false, "victim-preempt/s": false, "slow/op": false, "tps": false, "cs/op": false,
	} {
		if got := Latency(u, registry.Lower); got != want {
			t.Errorf("Latency(%q, lower) = %v, want %v", u, got, want)
		}
	}
	if Latency("ns/op", registry.Higher) {
		t.Error("a higher-is-better time taken for a latency")
	}
}

func TestSortFold(t *testing.T) {
	lines := []Line{{Pattern: "b"}, {Pattern: "B"}, {Pattern: "a"}, {Pattern: "_"}}
	sortFold(lines)
	var got []string
	for _, l := range lines {
		got = append(got, l.Pattern)
	}
	// C locale, lower case folded: '_' (0x5f) sorts after 'A'-'Z'.
	if want := "a B b _"; strings.Join(got, " ") != want {
		t.Errorf("sorted %v, want %s", got, want)
	}
}
