//go:build linux

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/kbench/kbench/internal/abfile"
	"github.com/kbench/kbench/internal/skip"
)

// event is one line of go test -json (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
	Elapsed float64
}

// outcome is how one test or benchmark of one kernel ended.
type outcome struct {
	action string // pass, skip or fail (a benchmark row with a result: pass)
	why    string // a skip's or failure's last message line
}

// kernel is what one kernel's stream says.
type kernel struct {
	label, release string
	seconds        string
	packages       map[string]string // package -> pass, fail or skip
	results        map[string]*outcome
	rows           int             // benchmark result rows
	benchText      strings.Builder // the stream's benchmark output, for benchcheck
}

func (k *kernel) name() string {
	if k.release != "" {
		return k.release
	}
	return k.label
}

// messageLine is a message line of a test's output, "    file_test.go:12: text".
var messageLine = regexp.MustCompile(`^\s+[^\s:]+\.go:\d+: (.*)$`)

// read parses one kernel's go test -json stream. Lines that are not JSON
// (a build error, vmexec's own messages) are passed over.
func read(label string, r io.Reader) (*kernel, error) {
	k := &kernel{label: label, packages: map[string]string{}, results: map[string]*outcome{}}
	last := map[string]string{} // key -> last message line
	// The package the benchmark text's last "pkg:" line names: the
	// testing package prints its labels once a process, and not at all
	// when a test already ran a benchmark (testing.Benchmark), so a
	// package's rows get their own "pkg:" line where it is missing.
	pkgLine := ""
	partial := map[string]string{} // key -> output after its last newline
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		var e event
		if err := json.Unmarshal(line, &e); err != nil {
			return nil, fmt.Errorf("%s: %v in %q", label, err, cut(string(line), 80))
		}
		if e.Package == "" {
			continue
		}
		key := e.Package + " " + e.Test
		switch e.Action {
		case "output":
			// test2json passes on partial lines (a benchmark's name and
			// tab, then its figures): each test's output is joined into
			// whole lines first.
			lines := strings.SplitAfter(partial[key]+e.Output, "\n")
			partial[key] = lines[len(lines)-1]
			for _, line := range lines[:len(lines)-1] {
				k.outputLine(e.Package, e.Test, line, last, &pkgLine)
			}
		case "pass", "skip", "fail":
			if e.Test == "" {
				k.packages[e.Package] = e.Action
				continue
			}
			if prev, ok := k.results[key]; ok && prev.action == "pass" && e.Action == "pass" {
				continue
			}
			k.results[key] = &outcome{action: e.Action, why: last[key]}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", label, err)
	}
	return k, nil
}

// outputLine takes one whole line of test's output in pkg.
func (k *kernel) outputLine(pkg, test, line string, last map[string]string, pkgLine *string) {
	key := pkg + " " + test
	out := strings.TrimRight(line, "\n")
	if rel, ok := strings.CutPrefix(out, "# kbench kernel.release: "); ok && k.release == "" {
		k.release = strings.TrimSpace(rel)
	}
	if m := messageLine.FindStringSubmatch(out); m != nil && test != "" {
		last[key] = m[1]
	}
	switch {
	case strings.HasPrefix(out, skip.LinePrefix):
		// A row's skip line, which benchcheck reads (test2json gives it
		// to the row's test).
		k.benchText.WriteString(line)
	case test == "":
		if !strings.HasPrefix(out, "=== ") && !strings.HasPrefix(out, "--- ") {
			k.benchText.WriteString(line)
		}
		if p, ok := strings.CutPrefix(out, "pkg: "); ok {
			*pkgLine = p
		}
	case abfile.IsResult(out):
		if *pkgLine != pkg {
			*pkgLine = pkg
			k.benchText.WriteString("pkg: " + pkg + "\n")
		}
		k.benchText.WriteString(line)
		k.rows++
		k.results[key] = &outcome{action: "pass"}
	}
}
