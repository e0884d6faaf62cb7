//go:build linux

package main

import (
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/abfile"
)

const smoke = `goos: linux
pkg: github.com/kbench/kbench/seccompbench
BenchmarkLoad/shape=single-2   100  30000 ns/op  33000 loads/s
BenchmarkLoad/shape=stress-ng-2 100 300000 ns/op
`

func TestCheckPasses(t *testing.T) {
	want := map[string]expectation{
		"seccompbench Load/shape=single":    {},
		"seccompbench Load/shape=stress-ng": {},
		"seccompbench Pulse/mode=protect":   {optional: true},
	}
	skipLine := "# kbench skip github.com/kbench/kbench/seccompbench BenchmarkPulse/mode=protect-2: needs KBENCH_PULSE=protect\n"
	problems, rows, err := check(strings.NewReader(smoke+skipLine), "smoke", want)
	if err != nil || len(problems) != 0 || rows != 2 {
		t.Fatalf("problems %q, rows %d, err %v", problems, rows, err)
	}
}

func TestCheckFindsMissingAndUnexpected(t *testing.T) {
	want := map[string]expectation{
		"seccompbench Load/shape=single": {},
		"seccompbench Syscall/filters=1": {},
	}
	problems, _, err := check(strings.NewReader(smoke), "smoke", want)
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(problems, "\n")
	for _, w := range []string{`no result row for "seccompbench Syscall/filters=1"`, `unexpected row "seccompbench Load/shape=stress-ng"`} {
		if !strings.Contains(all, w) {
			t.Errorf("problems lack %s:\n%s", w, all)
		}
	}
}

// TestCheckSkips: an optional row that neither ran nor left a skip line
// is a problem, and a required row that skipped is one naming the
// reason.
func TestCheckSkips(t *testing.T) {
	want := map[string]expectation{
		"seccompbench Load/shape=single":    {},
		"seccompbench Load/shape=stress-ng": {},
		"seccompbench Pulse/mode=protect":   {optional: true},
		"seccompbench Syscall/filters=1":    {},
	}
	skipLine := "# kbench skip github.com/kbench/kbench/seccompbench BenchmarkSyscall: no seccomp\n"
	problems, _, err := check(strings.NewReader(skipLine+smoke), "smoke", want)
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(problems, "\n")
	for _, w := range []string{`no result row for "seccompbench Pulse/mode=protect" and no skip line`,
		`no result row for "seccompbench Syscall/filters=1": it skipped: no seccomp`} {
		if !strings.Contains(all, w) || len(problems) != 2 {
			t.Errorf("problems lack %s:\n%s", w, all)
		}
	}
}

func TestCheckFindsSyntaxErrors(t *testing.T) {
	bad := smoke + "BenchmarkBroken 100 notanumber ns/op\n"
	problems, _, err := check(strings.NewReader(bad), "smoke", map[string]expectation{
		"seccompbench Load/shape=single":    {},
		"seccompbench Load/shape=stress-ng": {},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) == 0 {
		t.Fatal("a malformed result line passed")
	}
}

func TestCheckEmpty(t *testing.T) {
	problems, _, _ := check(strings.NewReader("PASS\n"), "smoke", map[string]expectation{})
	if len(problems) == 0 {
		t.Fatal("an output without rows passed")
	}
}

func TestCheckCounters(t *testing.T) {
	out := `# kbench counters: task-clock,context-switches,softirqs
goos: linux
pkg: github.com/kbench/kbench/seccompbench
BenchmarkA-2   100  30000 ns/op  10 cpu-ns/op  0.1 cs/op  0 softirq-hi/op  1 softirq-timer/op
BenchmarkB-2   100  30000 ns/op  10 cpu-ns/op  0.1 cs/op  33000 loads/s
PASS
ok  	github.com/kbench/kbench/seccompbench	1.0s
goos: linux
pkg: github.com/kbench/kbench/prctlbench
BenchmarkC-2   100  30000 ns/op
PASS
`
	files, _, err := abfile.ReadData([]string{"smoke"}, [][]byte{[]byte(out)})
	if err != nil {
		t.Fatal(err)
	}
	problems := checkCounters(files[0])
	if len(problems) != 1 || !strings.Contains(problems[0], "BenchmarkB-2 lacks counter unit softirq-") {
		t.Errorf("problems %q, want one for BenchmarkB-2's softirqs (C's binary counted nothing)", problems)
	}
}
