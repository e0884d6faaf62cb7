//go:build linux

package main

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/kbench/kbench/internal/vmflags"
)

// tries is how often -try runs a command whose guest died or froze
// (docs/vms.md, "Boots that die under TCG").
const tries = 2

// try runs cmd (go test -json -exec 'vmexec ... -outcome OUTCOMES') until
// no guest of its run died or froze, at most tries times, and writes the
// last run's stdout: a lost guest's run is thrown away whole. The tests'
// verdict is -check's: try returns 0 whatever it is, 2 when the command
// cannot start or the outcomes cannot be read.
func try(outcomes string, cmd []string, stdout, stderr io.Writer) int {
	fail := func(err error) int { fmt.Fprintln(stderr, "vmmatrix:", err); return 2 }
	for n := 1; ; n++ {
		if err := os.Remove(outcomes); err != nil && !os.IsNotExist(err) {
			return fail(err)
		}
		var out bytes.Buffer
		c := exec.Command(cmd[0], cmd[1:]...)
		c.Stdout, c.Stderr = &out, stderr
		if err := c.Run(); err != nil {
			if _, exited := err.(*exec.ExitError); !exited {
				return fail(fmt.Errorf("-try: %v", err))
			}
		}
		outs, err := vmflags.ReadOutcomeFile(outcomes)
		if err != nil {
			return fail(err)
		}
		var lost []string
		for _, o := range outs {
			if o.Lost() {
				lost = append(lost, cut(fmt.Sprintf("  %s: %s's guest %s (vmexec exit %d): %s", o.Dir, filepath.Base(o.Program), o.Outcome, o.Status, o.Why), 300))
			}
		}
		if len(lost) > 0 {
			fmt.Fprintf(stderr, "vmmatrix: a guest died or froze (docs/vms.md, boots that die under TCG); try %d of %d:\n%s\n", n, tries, strings.Join(lost, "\n"))
		}
		// With none lost the tests' own verdict stands; after the last
		// try its stream stands, its lost guest's package failed in it
		// (-check reports it).
		if len(lost) == 0 || n == tries {
			if _, err := stdout.Write(out.Bytes()); err != nil {
				return fail(err)
			}
			return 0
		}
	}
}

// check decides one kernel's part of the matrix from its stream: 1 where
// a package or a test failed (each with its last message line; a package
// that failed with no test of its own failing, by its build, its binary
// or its guest, alone), no package passed, or the benchmark rows ran on
// another kernel than LABEL's (their kernel.release line), each printed;
// 0 when it passed, 2 when the stream cannot be read.
func check(path string, stdout, stderr io.Writer) int {
	k, err := readStream(path)
	if err != nil {
		fmt.Fprintln(stderr, "vmmatrix:", err)
		return 2
	}
	var failed []string
	withTest := map[string]bool{}
	for key, o := range k.results {
		if pkg, _, _ := strings.Cut(key, " "); o.action == "fail" {
			withTest[pkg] = true
			line := key + ": failed"
			if o.why != "" {
				line += ": " + cut(o.why, 300)
			}
			failed = append(failed, line)
		}
	}
	for pkg, a := range k.packages {
		if a == "fail" && !withTest[pkg] {
			failed = append(failed, pkg+": failed (no test of it failed: its build, its binary or its guest)")
		}
	}
	sort.Strings(failed)
	if !slices.Contains(slices.Collect(maps.Values(k.packages)), "pass") {
		failed = append(failed, "no package passed")
	}
	if k.rows > 0 && k.release != k.label {
		failed = append(failed, fmt.Sprintf("the guests' fingerprint names kernel %q, not %s", k.release, k.label))
	}
	for _, f := range failed {
		fmt.Fprintf(stdout, "FAIL: matrix: %s: %s\n", k.label, f)
	}
	return min(len(failed), 1)
}
