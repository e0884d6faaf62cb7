package benchmain

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/fingerprint"
)

func TestSetupPrintsFingerprintAndUnits(t *testing.T) {
	var out, errb bytes.Buffer
	extra := func() []fingerprint.Field { return []fingerprint.Field{{Key: "test.extra", Value: "yes"}} }
	if code := setup(&out, &errb, []Extra{extra}); code != 0 {
		t.Fatalf("setup = %d: %s", code, errb.String())
	}
	for _, want := range []string{"# kbench kernel.release: ", "# kbench test.extra: yes", "Unit ops/s better=higher"} {
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
