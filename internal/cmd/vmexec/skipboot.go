//go:build linux

package main

import (
	"context"
	"debug/buildinfo"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/kbench/kbench/internal/testflags"
)

// nothingToRun reports whether the test binary args[0] would run
// nothing with args[1:], and then what it would print on stdout and
// stderr.
func nothingToRun(args []string) (stdout, stderr string, nothing bool) {
	bin, err := exec.LookPath(args[0])
	if err != nil {
		return "", "", false
	}
	if bi, err := buildinfo.ReadFile(bin); err != nil || !strings.HasSuffix(bi.Path, ".test") {
		return "", "", false
	}
	flags, ok := testflags.Binary(args[1:])
	if !ok {
		return "", "", false
	}
	// Flags whose run prints or writes more than a run of nothing.
	for _, f := range append([]string{"list", "fuzz", "gocoverdir"}, profileFlags...) {
		if _, set := flags[f]; set {
			return "", "", false
		}
	}
	if s, set := flags["shuffle"]; set && s != "off" || os.Getenv("KBENCH_PROFILE") != "" || os.Getenv("GOCOVERDIR") != "" {
		return "", "", false
	}
	bench := flags["bench"]
	if mayRun(bin, flags["run"], "Test", "Example", "Fuzz") || bench != "" && mayRun(bin, bench, "Benchmark") {
		return "", "", false
	}
	// What testing.M.Run prints when nothing ran (Go 1.26): the warning
	// without -test.bench, then PASS; go test -json's test2json mode
	// puts the warning on stdout and marks PASS with \x16.
	warning := ""
	if bench == "" {
		warning = "testing: warning: no tests to run\n"
	}
	if flags["v"] == "test2json" {
		return warning + "\x16PASS\n", "", true
	}
	return "PASS\n", warning, true
}

// mayRun runs bin -test.list with the top level of pattern (as testing
// splits -test.run at unbracketed slashes) and says whether it listed a
// name with one of prefixes, or failed.
func mayRun(bin, pattern string, prefixes ...string) bool {
	top := topLevel(pattern)
	if top == "" {
		top = "." // an empty element matches every name; -test.list= lists none
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-test.list="+top)
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "KBENCH_PULSE=") })
	out, err := cmd.Output()
	// Other lines are a TestMain's own output, such as benchmain's fingerprint.
	listed := regexp.MustCompile(`(?m)^(` + strings.Join(prefixes, "|") + `)[^ \t]*$`)
	return err != nil || listed.Match(out)
}

// topLevel is the first element of a -test.run or -test.bench pattern:
// up to its first slash outside brackets and parentheses, with spaces
// made underscores as testing rewrites them.
func topLevel(pattern string) string {
	depth := 0
	for i := 0; i < len(pattern); i++ {
		switch pattern[i] {
		case '\\':
			i++
		case '[', '(':
			depth++
		case ']', ')':
			if depth > 0 {
				depth--
			}
		case '/':
			if depth == 0 {
				return strings.ReplaceAll(pattern[:i], " ", "_")
			}
		}
	}
	return strings.ReplaceAll(pattern, " ", "_")
}
