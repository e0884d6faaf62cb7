//go:build linux

package main

import (
	"io"
	"slices"
	"strings"
	"testing"
)

// TestTCGAppend: TCG boots get -tcg-append (tsc=unstable by default) after
// vmexec's command line and -append; KVM boots and an empty -tcg-append do not.
func TestTCGAppend(t *testing.T) {
	appendOf := func(flags []string, accel string) string {
		cfg, err := parseFlags(append(flags, "-kernel", "k", "true"), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		args := (&host{cfg: cfg, tmp: t.TempDir()}).qemuArgs(accel)
		i := slices.Index(args, "-append")
		if i < 0 || i+1 == len(args) {
			t.Fatalf("no -append in %q", args)
		}
		return args[i+1]
	}
	if got := appendOf([]string{"-append", "nokaslr"}, "tcg"); !strings.HasSuffix(got, " nokaslr tsc=unstable") {
		t.Errorf("TCG boot's command line %q, want it to end in the user's -append and tsc=unstable", got)
	}
	if got := appendOf(nil, "kvm"); strings.Contains(got, "tsc=") {
		t.Errorf("KVM boot's command line %q has the TCG option", got)
	}
	if got := appendOf([]string{"-tcg-append="}, "tcg"); strings.Contains(got, "tsc=") {
		t.Errorf("-tcg-append='': command line %q", got)
	}
	if got := appendOf([]string{"-tcg-append=clocksource=acpi_pm"}, "tcg"); !strings.HasSuffix(got, " clocksource=acpi_pm") {
		t.Errorf("-tcg-append=clocksource=acpi_pm: command line %q", got)
	}
}
