//go:build linux

package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/kbench/kbench/internal/abfile"
	"github.com/kbench/kbench/internal/skip"
)

// outcome is how one test or benchmark of one kernel ended.
type outcome struct {
	action string // pass, skip or fail (a benchmark row with a result: pass)
	why    string // a skip's or failure's last message line
}

// kernel is what one kernel's stream says.
type kernel struct {
	label, release, seconds string            // seconds: "N s", the wall time
	packages                map[string]string // package -> pass, fail or skip
	results                 map[string]*outcome
	rows                    int             // benchmark result rows
	benchText               strings.Builder // the stream's benchmark output, for benchcheck
}

func (k *kernel) name() string { return cmp.Or(k.release, k.label) }

// messageLine is a message line of a test's output, "    file_test.go:12: text".
var messageLine = regexp.MustCompile(`^\s+[^\s:]+\.go:\d+: (.*)$`)

// read parses one kernel's go test -json stream (cmd/test2json). Lines
// that are not JSON (a build error, vmexec's own messages) are passed over.
func read(label string, r io.Reader) (*kernel, error) {
	k := &kernel{label: label, packages: map[string]string{}, results: map[string]*outcome{}}
	last := map[string]string{}    // key -> last message line
	partial := map[string]string{} // key -> output after its last newline
	// The package the benchmark text's last "pkg:" line names: the
	// testing package prints its labels once a process, and not at all
	// when a test already ran a benchmark (testing.Benchmark), so a
	// package's rows get their own "pkg:" line where it is missing.
	pkgLine := ""
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		var e struct{ Action, Package, Test, Output string }
		if line := sc.Bytes(); len(line) == 0 || line[0] != '{' {
			continue
		} else if err := json.Unmarshal(line, &e); err != nil {
			return nil, fmt.Errorf("%s: %v in %q", label, err, cut(string(line), 80))
		}
		key := e.Package + " " + e.Test
		switch {
		case e.Package == "":
		case e.Action == "output":
			// test2json passes on partial lines (a benchmark's name and
			// tab, then its figures): each test's output is joined into
			// whole lines first.
			lines := strings.SplitAfter(partial[key]+e.Output, "\n")
			partial[key] = lines[len(lines)-1]
			for _, line := range lines[:len(lines)-1] {
				out := strings.TrimRight(line, "\n")
				if rel, ok := strings.CutPrefix(out, "# kbench kernel.release: "); ok && k.release == "" {
					k.release = strings.TrimSpace(rel)
				}
				if m := messageLine.FindStringSubmatch(out); m != nil && e.Test != "" {
					last[key] = m[1]
				}
				switch {
				case strings.HasPrefix(out, skip.LinePrefix):
					// A row's skip line, which benchcheck reads (test2json
					// gives it to the row's test).
					k.benchText.WriteString(line)
				case e.Test == "":
					if !strings.HasPrefix(out, "=== ") && !strings.HasPrefix(out, "--- ") {
						k.benchText.WriteString(line)
					}
					if p, ok := strings.CutPrefix(out, "pkg: "); ok {
						pkgLine = p
					}
				case abfile.IsResult(out):
					if pkgLine != e.Package {
						pkgLine = e.Package
						k.benchText.WriteString("pkg: " + e.Package + "\n")
					}
					k.benchText.WriteString(line)
					k.rows++
					k.results[key] = &outcome{action: "pass"}
				}
			}
		case e.Action != "pass" && e.Action != "skip" && e.Action != "fail":
		case e.Test == "":
			k.packages[e.Package] = e.Action
		case e.Action != "pass" || k.results[key] == nil || k.results[key].action != "pass":
			k.results[key] = &outcome{action: e.Action, why: last[key]}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", label, err)
	}
	return k, nil
}
