//go:build linux

package benchmain

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/cpus"
	"github.com/kbench/kbench/internal/fingerprint"
	"github.com/kbench/kbench/internal/pulse"
	"github.com/kbench/kbench/internal/skip"
)

func TestSetupPrintsFingerprintAndUnits(t *testing.T) {
	var out, errb bytes.Buffer
	extra := func() []fingerprint.Field { return []fingerprint.Field{{Key: "test.extra", Value: "yes"}} }
	if code := setup(&out, &errb, []Extra{extra}); code != 0 {
		t.Fatalf("setup = %d: %s", code, errb.String())
	}
	for _, want := range []string{"# kbench kernel.release: ", "# kbench test.extra: yes", "# kbench pulse.earlier: ", "Unit ops/s better=higher"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestSetupStopsOnBadOption(t *testing.T) {
	t.Setenv("KBENCH_NO_SUCH_OPTION", "1")
	var out, errb bytes.Buffer
	if code := setup(&out, &errb, nil); code != 2 {
		t.Fatalf("setup = %d, want 2", code)
	}
	if !strings.Contains(errb.String(), "KBENCH_NO_SUCH_OPTION") {
		t.Errorf("message does not name the variable: %s", errb.String())
	}
	if out.Len() != 0 {
		t.Errorf("printed before stopping: %s", out.String())
	}
}

func TestSetupStopsOnBadPulseMode(t *testing.T) {
	t.Setenv("KBENCH_PULSE", "bogus")
	var out, errb bytes.Buffer
	if code := setup(&out, &errb, nil); code != 2 {
		t.Fatalf("setup = %d, want 2", code)
	}
	for _, want := range []string{`KBENCH_PULSE="bogus"`, "off, sham, protect"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("message lacks %q: %s", want, errb.String())
		}
	}
}

func TestSetupRecordsShamSweep(t *testing.T) {
	initial, err := pulse.Initial()
	if err != nil {
		t.Skipf("PR_GET_SPECULATION_CTRL(PR_SPEC_INDIRECT_BRANCH): %s; no sweep to record", skip.Errno(err))
	}
	t.Setenv("KBENCH_PULSE", "sham")
	var out, errb bytes.Buffer
	if code := setup(&out, &errb, nil); code != 0 {
		t.Fatalf("setup = %d: %s", code, errb.String())
	}
	online, err := cpus.Online()
	if err != nil {
		t.Fatal(err)
	}
	list := fingerprint.FormatCPUList(online)
	for _, want := range []string{
		"# kbench pulse.mode: sham\n",
		"# kbench pulse.cpus: " + list + "\n",
		"# kbench pulse.states: " + initial.String() + " -> " + initial.String() + " (CPUs " + list + ")\n",
		"# kbench pulse.at: ",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// TestSetupStopsWhenProtectImpossible asks for a protect sweep where the
// kernel offers no control; the run must stop and say why. Where the
// control exists the request would really protect, so it is not made.
func TestSetupStopsWhenProtectImpossible(t *testing.T) {
	initial, err := pulse.Initial()
	if err == nil && pulse.CheckControl(initial, "") == nil {
		t.Skipf("the kernel offers the control (state %s): a protect sweep here would change this boot's results", initial.Describe())
	}
	t.Setenv("KBENCH_PULSE", "protect")
	var out, errb bytes.Buffer
	if code := setup(&out, &errb, nil); code != 1 {
		t.Fatalf("setup = %d, want 1: %s", code, errb.String())
	}
	want := "PR_GET_SPECULATION_CTRL"
	if err == nil {
		want = "state " + initial.Describe()
	}
	for _, w := range []string{"KBENCH_PULSE=protect", want, "no test or benchmark was run"} {
		if !strings.Contains(errb.String(), w) {
			t.Errorf("message lacks %q: %s", w, errb.String())
		}
	}
	if out.Len() != 0 {
		t.Errorf("printed a fingerprint for a run that stopped: %s", out.String())
	}
}
