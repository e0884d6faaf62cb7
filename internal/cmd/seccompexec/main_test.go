//go:build linux

package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/gotool"
	"github.com/kbench/kbench/internal/procfs"
	"github.com/kbench/kbench/internal/seccompfilter"
)

// TestFilterReadsArgs checks that the filter loads args[0] first, which
// is what keeps the kernel from answering from its action cache.
func TestFilterReadsArgs(t *testing.T) {
	prog, err := argFilter()
	if err != nil {
		t.Fatal(err)
	}
	if !prog.ReadsArgs() || prog.Insns[0] != seccompfilter.LoadArgs0 {
		t.Errorf("filter starts with %v (reads args: %v), want a load of args[0]", prog.Insns[0], prog.ReadsArgs())
	}
}

// TestExecUnderFilters builds seccompexec, runs a program under it and
// checks, in the program's own /proc status, that it carries the filters
// and no_new_privs, and that the fingerprint line came first.
func TestExecUnderFilters(t *testing.T) {
	st, err := procfs.ReadStatus("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	base, err := st.Int("Seccomp_filters")
	if err != nil {
		t.Skipf("no Seccomp_filters in /proc/self/status (Linux 5.9+): %v", err)
	}
	bin := filepath.Join(t.TempDir(), "seccompexec")
	build := exec.Command(gotool.Go(t), "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "-filters=7", "cat", "/proc/self/status").Output()
	if err != nil {
		t.Fatalf("seccompexec -filters=7 cat /proc/self/status: %v", err)
	}
	lines := strings.Split(string(out), "\n")
	if want := "# kbench inject.seccomp: 7 filters reading args[0], TSYNC (seccompexec)"; lines[0] != want {
		t.Errorf("first line %q, want %q", lines[0], want)
	}
	child := procfs.ParseStatus("child", []byte(strings.Join(lines[1:], "\n")))
	for field, want := range map[string]int{"Seccomp": 2, "Seccomp_filters": base + 7, "NoNewPrivs": 1} {
		if got, err := child.Int(field); err != nil || got != want {
			t.Errorf("the program's %s is %d (%v), want %d", field, got, err, want)
		}
	}

	var stderr bytes.Buffer
	bad := exec.Command(bin, "-filters=0", "true")
	bad.Stderr = &stderr
	if err := bad.Run(); err == nil || bad.ProcessState.ExitCode() != 2 || !strings.Contains(stderr.String(), "-filters accepts 1-1000") {
		t.Errorf("-filters=0: %v, stderr %q; want exit 2 naming the option", err, stderr.String())
	}
}
