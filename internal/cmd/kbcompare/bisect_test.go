//go:build linux

package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/abstat/sim"
)

// TestBisect: GOOD is three boots of A, BAD three boots of B (32
// seccomp filters on every getpid), all real runs; each candidate is
// three more boots, and -git-bisect's exit status is what git bisect run
// reads.
func TestBisect(t *testing.T) {
	good := sim.Assemble(t, "good.txt", sim.BootFiles("a", sim.BootsA, nil)...)
	bad := sim.Assemble(t, "bad.txt", sim.BootFiles("b", sim.BootsB, nil)...)
	bootsC := []string{"cccccccc-0000-4000-8000-000000000001", "cccccccc-0000-4000-8000-000000000002", "cccccccc-0000-4000-8000-000000000003"}
	likeGood := sim.Assemble(t, "c.txt", sim.BootFiles("a2", bootsC, nil)...)
	likeBad := sim.Assemble(t, "c.txt", sim.BootFiles("b", bootsC, []float64{1.01, 0.99, 1.02})...)
	// Halfway: A' runs slowed by √8, about half of BAD's 8x on a log scale.
	between := sim.Assemble(t, "c.txt", sim.BootFiles("a2", bootsC, []float64{2.8, 2.8, 2.8})...)
	// Too noisy: boots of A' whose layouts put them anywhere from GOOD to BAD.
	noisy := sim.Assemble(t, "c.txt", sim.BootFiles("a2", bootsC, []float64{1, 3, 8})...)
	// The candidate's row failed (its kernel broke the benchmark).
	failed := sim.Assemble(t, "c.txt", sim.BootFile{File: "syscall-a2-run1.txt", Boot: sim.BootsC[0]},
		sim.BootFile{File: "syscall-a2-run2.txt", Boot: sim.BootsC[1], Edit: DropRows(bootsC[1], FailBlock)},
		sim.BootFile{File: "syscall-a2-run3.txt", Boot: sim.BootsC[2]})
	failOld := sim.File(t, "fail-old.txt")
	failNew := sim.File(t, "fail-new.txt")
	failNewV := sim.File(t, "fail-new-v.txt")
	for _, c := range []struct {
		name string
		args []string
		code int
		line string
	}{
		{"like good", []string{good, bad, likeGood}, 0, "like GOOD (exit 0): seccompbench " + sim.SyscallRow + " sec/op: ~"},
		{"like bad", []string{good, bad, likeBad}, 1, "like BAD (exit 1): seccompbench " + sim.SyscallRow + " sec/op: +"},
		{"between", []string{good, bad, between}, 125, "(between the two)"},
		{"noisy", []string{good, bad, noisy}, 125, "too noisy: mde"},
		{"candidate failed", []string{good, bad, failed}, 125, "failed in the candidate"},
		{"good like bad", []string{good, likeGood, likeGood}, 128, "GOOD and BAD do not differ"},
		{"several benchmarks", []string{failOld, failOld, failOld}, 128, "share 3 benchmarks"},
		{"-row picks one", []string{"-row", "flows=1/", failOld, failOld, failOld}, 128, "GOOD and BAD do not differ in failbench TCPCRR/flows=1/mm=separate-2"},
		{"-row matches none", []string{"-row", "nosuch", good, bad, likeGood}, 128, `no row that all three files hold matches -row "nosuch"`},
		// The regression is a failure (BAD fails the row): a candidate that
		// passes it is like GOOD, one that fails it like BAD.
		{"failure, passes", []string{"-row", "flows=16/", failOld, failNew, failOld}, 0, "failed in BAD (--- FAIL in new"},
		{"failure, fails", []string{"-row", "flows=16/", failOld, failNew, failNewV}, 1, "failed in BAD and in the candidate: --- FAIL in new"},
		{"GOOD failed", []string{"-row", "flows=16/", failNew, failOld, failOld}, 128, "failed in GOOD"},
		{"missing file", []string{good, bad, filepath.Join(t.TempDir(), "none.txt")}, 128, "an input cannot be read"},
		{"two files", []string{good, bad}, 128, ""},
		{"bad flag", []string{"-threshold", "x", good, bad, likeGood}, 128, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(append([]string{"-git-bisect"}, c.args...), &out, &errOut)
			if code != c.code {
				t.Errorf("exit %d, want %d\n%s%s", code, c.code, out.String(), errOut.String())
			}
			if c.line != "" && !strings.Contains(out.String(), c.line) {
				t.Errorf("output %q lacks %q", out.String(), c.line)
			}
			if n := strings.Count(out.String(), "\n"); c.line != "" && n != 1 {
				t.Errorf("%d lines, want one:\n%s", n, out.String())
			}
			if code != 128 && !strings.HasPrefix(out.String(), fmt.Sprintf("kbcompare -git-bisect: ")) {
				t.Errorf("output %q", out.String())
			}
		})
	}
}
