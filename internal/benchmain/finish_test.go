//go:build linux

package benchmain

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/region"
)

// TestFinishFailsForAFailedRow: a row whose run failed makes a passing
// run's status 1 with a message; the testing package alone passes the
// binary when the failure is in a later -count.
func TestFinishFailsForAFailedRow(t *testing.T) {
	var errb bytes.Buffer
	if len(region.Failed()) == 0 {
		if code := finish(0, &errb); code != 0 {
			t.Fatalf("finish(0) with no failed row = %d: %s", code, errb.String())
		}
	}
	testing.Benchmark(func(b *testing.B) {
		region.New(b)
		b.Fail()
	})
	if code := finish(0, &errb); code != 1 {
		t.Fatalf("finish(0) after a failed row = %d, want 1", code)
	}
	if !strings.Contains(errb.String(), "later -count") {
		t.Errorf("message does not say why: %q", errb.String())
	}
	if code := finish(2, &errb); code != 2 {
		t.Errorf("finish(2) = %d, want m.Run's own 2", code)
	}
}
