//go:build linux

package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/abstat/sim"
)

// TestPlan: -plan prints kbab -target's design of a pilot of two files
// or of one (its boots in turn an A/A pilot), per package and row, with
// its total; it refuses a pilot under two boots a side, what does not
// apply to it, and -target or -boot-cost without it.
func TestPlan(t *testing.T) {
	a := sim.Assemble(t, "a.txt", sim.BootFiles("a", sim.BootsA, []float64{1, 1.03, 0.98})...)
	b := sim.Assemble(t, "b.txt", sim.BootFiles("b", sim.BootsB, nil)...)
	aa := sim.Assemble(t, "aa.txt", append(sim.BootFiles("a", sim.BootsA, nil), sim.BootFiles("a2", sim.BootsC, nil)...)...)
	for _, args := range [][]string{{"-plan", aa}, {"-plan", a, b}, {"-plan", "-target", "10%", "-boot-cost", "20s", a, b}} {
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != 0 {
			t.Fatalf("kbcompare %s: exit %d, want 0\n%s", strings.Join(args, " "), code, errb.String())
		}
		for _, want := range []string{"design: Stein's two-stage t-test", "pilot 3 boots a side", "seccompbench: boot ", sim.SyscallRow, "planned: "} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("kbcompare %s: no %q in\n%s", strings.Join(args, " "), want, out.String())
			}
		}
		if strings.Contains(strings.Join(args, " "), "20s") && !strings.Contains(out.String(), "boot 20.0s") {
			t.Errorf("-boot-cost 20s: the plan does not use it:\n%s", out.String())
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-plan", a, b, b}, "usage: kbcompare -plan"},
		{[]string{"-plan", a}, "a pilot of 1 boot(s) a side: want at least 2"},
		{[]string{"-plan", "-format", "json", a}, "-format does not apply to -plan"},
		{[]string{"-plan", "-target", "0", a}, `invalid value "0" for flag -target: want a percentage above 0 and below 100`},
		{[]string{"-plan", "-target", "100%", a}, `invalid value "100%" for flag -target: want a percentage above 0 and below 100`},
		{[]string{"-plan", "-threshold", "0", a}, "-target accepts a percentage above 0"}, // -target defaults to -threshold
		{[]string{"-threshold", "100", a, b}, `invalid value "100" for flag -threshold: want a percentage of 0 or more and below 100`},
		{[]string{"-target", "5%", a, b}, "-target and -boot-cost go with -plan"},
		{[]string{"-plan", "-boot-cost", "-1s", a}, "-boot-cost -1s: want a duration >= 0"},
	} {
		var out, errb bytes.Buffer
		if code := run(c.args, &out, &errb); code != 2 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("kbcompare %s: exit %d, stderr %q; want 2 and %q", strings.Join(c.args, " "), code, errb.String(), c.want)
		}
	}
}
