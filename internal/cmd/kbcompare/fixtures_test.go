//go:build linux

package main

import (
	"strings"

	"github.com/kbench/kbench/internal/abfile"
)

// Edits of the assembled Syscall fixtures (sim.Assemble) that only
// kbcompare's tests make.

// FailBlock is a b.Fatal in the Syscall row, in the form go1.26's go
// test prints it for a real failing sub-benchmark (the parent fails with
// it, and the run stops with FAIL instead of PASS); the message is made up.
const FailBlock = "--- FAIL: BenchmarkSyscall/work=getpid/kind=cached/filters=0\n" +
	"    syscall_test.go:60: getppid returned 1, errno 0; filter 0 of 0 should have denied it\n" +
	"--- FAIL: BenchmarkSyscall\nFAIL\n"

// DropRows removes the result lines of the run of boot boot from an
// assembled file and puts in its PASS line's place what go test prints
// instead (ending in PASS for skips, FAIL for failures).
func DropRows(boot, instead string) func(string) string {
	return func(s string) string {
		start := strings.Index(s, abfile.BootIDLine+boot+"\n")
		if start < 0 {
			panic("no boot " + boot)
		}
		end := len(s)
		if i := strings.Index(s[start+1:], abfile.BootIDLine); i >= 0 {
			end = start + 1 + i
		}
		var kept []string
		for _, l := range strings.SplitAfter(s[start:end], "\n") {
			switch {
			case strings.HasPrefix(l, "BenchmarkSyscall/"):
			case l == "PASS\n":
				kept = append(kept, instead)
			default:
				kept = append(kept, l)
			}
		}
		return s[:start] + strings.Join(kept, "") + s[end:]
	}
}

// FirstSampleOnly keeps each run's first result line: -count=1 per boot.
func FirstSampleOnly(s string) string {
	var b strings.Builder
	seen := false
	for _, l := range strings.SplitAfter(s, "\n") {
		if strings.HasPrefix(l, abfile.BootIDLine) {
			seen = false
		}
		if strings.HasPrefix(l, "Benchmark") {
			if seen {
				continue
			}
			seen = true
		}
		b.WriteString(l)
	}
	return b.String()
}
