//go:build linux

package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/vmflags"
)

// TestTCGAppend: TCG boots get -tcg-append (tsc=unstable no_timer_check by default) after
// vmexec's command line and -append; KVM boots and an empty -tcg-append do not.
func TestTCGAppend(t *testing.T) {
	appendOf := func(flags []string, accel string) string {
		cfg, err := parseFlags(append(flags, "-kernel", "/k", "true"), io.Discard)
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
	if got := appendOf([]string{"-append", "nokaslr"}, "tcg"); !strings.HasSuffix(got, " nokaslr tsc=unstable no_timer_check") {
		t.Errorf("TCG boot's command line %q, want it to end in the user's -append and tsc=unstable no_timer_check", got)
	}
	if got := appendOf(nil, "kvm"); strings.Contains(got, "tsc=") || strings.Contains(got, "no_timer_check") {
		t.Errorf("KVM boot's command line %q has the TCG option", got)
	}
	if got := appendOf([]string{"-tcg-append="}, "tcg"); strings.Contains(got, "tsc=") || strings.Contains(got, "no_timer_check") {
		t.Errorf("-tcg-append='': command line %q", got)
	}
	if got := appendOf([]string{"-tcg-append=clocksource=acpi_pm"}, "tcg"); !strings.HasSuffix(got, " clocksource=acpi_pm") {
		t.Errorf("-tcg-append=clocksource=acpi_pm: command line %q", got)
	}
}

// The longest -append kbab and vmexec accept, with the longest
// -tcg-append, fits the 2047 bytes an x86 kernel keeps; a longer
// -tcg-append, or one with a control byte, is refused naming the flag.
func TestTCGAppendFits(t *testing.T) {
	longest := vmflags.Reserved - len(vmflags.OwnCmdline) - 2
	app := strings.Repeat("a", vmflags.MaxAppend)
	cfg, err := parseFlags([]string{"-kernel", "/k", "-append", app, "-tcg-append", strings.Repeat("t", longest), "true"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	h := &host{cfg: cfg, tmp: t.TempDir()}
	if n := len(h.cmdline("tcg")); n > 2047 {
		t.Errorf("the longest command line is %d bytes, more than the kernel's 2047", n)
	}
	for v, want := range map[string]string{
		strings.Repeat("t", longest+1): fmt.Sprintf("-tcg-append accepts at most %d bytes", longest),
		"tsc=unstable\nx":              "-tcg-append accepts printable text",
	} {
		if _, err := parseFlags([]string{"-kernel", "/k", "-tcg-append", v, "true"}, io.Discard); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("-tcg-append %.20q: %v, want %q", v, err, want)
		}
	}
}
