//go:build linux

package seccompbench

import (
	"strings"
	"testing"
)

func TestOpLoadsNineFilters(t *testing.T) {
	l := newLoader(t)
	for i := range uint64(4) {
		loads, err := l.Op(i, -1, true)
		if err != nil || loads != StressNGLoads {
			t.Fatalf("op %d: %d loads, %v", i, loads, err)
		}
	}
	if loads, err := l.Single(0, true); err != nil || loads != 1 {
		t.Fatalf("single: %d loads, %v", loads, err)
	}
	contained(t)
}

func TestOpCheckFiresOnWrongCount(t *testing.T) {
	l := newLoader(t)
	if !l.FiltersKnown {
		t.Skip("this kernel has no Seccomp_filters line (Linux 5.9+) to count against")
	}
	l.Base++ // as if the thread should carry one filter more than it does
	_, err := l.Op(0, -1, true)
	if err == nil || !strings.Contains(err.Error(), "want Seccomp_filters") {
		t.Fatalf("an op showing one filter too few passed: %v", err)
	}
	if _, err := l.Single(0, true); err == nil {
		t.Fatal("a single load showing one filter too few passed")
	}
	contained(t)
}

func TestOpCheckFiresOnChangedAnswer(t *testing.T) {
	l := newLoader(t)
	l.want.invalidOp = 0 // as if seccomp(~0U) had succeeded on the first op
	_, err := l.Op(0, -1, false)
	if err == nil || !strings.Contains(err.Error(), "probe calls answered") {
		t.Fatalf("a changed probe answer passed: %v", err)
	}
}

func TestOpPinned(t *testing.T) {
	l := newLoader(t)
	if _, err := l.Op(0, 1<<20, false); err == nil {
		t.Fatal("an op pinned to a CPU that does not exist ran")
	}
}
