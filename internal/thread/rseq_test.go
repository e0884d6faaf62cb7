//go:build linux

package thread

import (
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestRunThreadHasRseq checks that a Run thread has an rseq area, from
// the C library or from Run, wherever the kernel has rseq: registering
// a second one must fail with EINVAL (the kernel refuses an area at
// another address). A kernel without rseq skips.
func TestRunThreadHasRseq(t *testing.T) {
	desc := Rseq()
	t.Log(desc)
	if strings.HasPrefix(desc, "none") {
		t.Skipf("no rseq here: %s", desc)
	}
	if strings.HasPrefix(desc, "unknown") {
		t.Fatal(desc)
	}
	err := Run(func() error {
		if e := new(rseqArea).call(0); e != unix.EINVAL {
			t.Errorf("a second rseq registration on a Run thread returned %v, want EINVAL (the thread has none)", errOrOK(e))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func errOrOK(e unix.Errno) string {
	if e == 0 {
		return "success"
	}
	return e.Error()
}
