//go:build linux

package seccompbench

import (
	"slices"
	"testing"

	"github.com/kbench/kbench/internal/seccompfilter"
)

func TestHugeSizesFollowStressNG(t *testing.T) {
	// Doubling from 32 while loads succeed, then halving the step between
	// the last success (4096) and the first failure (8192).
	want := []int{32, 64, 128, 256, 512, 1024, 2048, 4096,
		8192, 6144, 5120, 4608, 4352, 4224, 4160, 4128, 4112, 4104, 4100, 4098, 4097}
	if !slices.Equal(hugeSizes, want) {
		t.Fatalf("hugeSizes = %v\nwant        %v", hugeSizes, want)
	}
	ok, refused := 0, 0
	for _, n := range hugeSizes {
		if n <= MaxHuge {
			ok++
		} else {
			refused++
		}
	}
	if ok != StressNGLoads-1 || refused != hugeFailures {
		t.Fatalf("%d loads and %d refusals, want %d and %d", ok, refused, StressNGLoads-1, hugeFailures)
	}
	if len(hugeAllow) != 8192 {
		t.Fatalf("hugeAllow has %d instructions, want 8192", len(hugeAllow))
	}
	p, err := seccompfilter.Assemble(hugeProgram(3))
	if err != nil || p.Len() != 3 || p.ReadsArgs() || p.Raw()[0] != hugeAllow[0] {
		t.Fatalf("huge program: %v, %d instructions", err, p.Len())
	}
}

func TestSmallFiltersMatchStressNGLength(t *testing.T) {
	small, err := smallFilters()
	if err != nil {
		t.Fatal(err)
	}
	// stress-ng's allow-list filters are 12 and 14 instructions.
	if small[0].Len() != 12 || small[1].Len() != 14 {
		t.Fatalf("small filters have %d and %d instructions, want 12 and 14", small[0].Len(), small[1].Len())
	}
	for _, p := range small {
		if p.ReadsArgs() {
			t.Error("the small filter reads arguments; stress-ng's reads only nr")
		}
	}
}

func TestSyscallFilterKinds(t *testing.T) {
	cached, err := syscallFilter(Cached, 1)
	if err != nil {
		t.Fatal(err)
	}
	full, err := syscallFilter(Full, 1)
	if err != nil {
		t.Fatal(err)
	}
	if cached.ReadsArgs() {
		t.Error("kind=cached reads arguments, so the kernel cannot cache its answer")
	}
	if !full.ReadsArgs() {
		t.Error("kind=full reads only nr and arch, so the kernel would cache its answer")
	}
	if full.Len() != cached.Len()+1 {
		t.Errorf("full has %d instructions, cached %d: they should differ only by the argument load", full.Len(), cached.Len())
	}
	if _, err := syscallFilter("bogus", 1); err == nil {
		t.Error("unknown kind accepted")
	}
	for _, i := range []int{0, 4096} {
		if _, err := syscallFilter(Full, i); err == nil {
			t.Errorf("filter index %d accepted", i)
		}
	}
}
