//go:build linux

package abmath

import "testing"

// TestHLRank checks the interval's rank against the Mann-Whitney table's
// two-sided 5% critical values U (the rank is U+1): none for 3+3, 0 for
// 4+4, 2 for 5+5, 5 for 6+6, 23 for 10+10, 64 for 15+15, 127 for 20+20;
// and the normal approximation beyond 20 a side within one of the exact
// rank (143 for 21+21, from U's exact distribution).
func TestHLRank(t *testing.T) {
	for _, c := range []struct{ n, k int }{{3, 0}, {4, 1}, {5, 3}, {6, 6}, {10, 24}, {15, 65}, {20, 128}} {
		if k := hlRank(c.n, c.n); k != c.k {
			t.Errorf("%d+%d: rank %d, want %d", c.n, c.n, k, c.k)
		}
	}
	if k := hlRank(21, 21); k < 142 || k > 144 {
		t.Errorf("21+21 (normal approximation): rank %d, want 143 within 1", k)
	}
}
