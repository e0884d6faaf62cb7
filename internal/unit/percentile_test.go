//go:build linux

package unit

import "testing"

func TestPercentile(t *testing.T) {
	ten := []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, c := range []struct {
		v    []int64
		p    float64
		want int64
	}{
		{ten, 50, 5}, {ten, 99, 10}, {ten, 10, 1}, {ten, 11, 2}, {ten, 100, 10},
		{[]int64{7}, 50, 7},
		{nil, 99, 0},
	} {
		if got := Percentile(c.v, c.p); got != c.want {
			t.Errorf("Percentile(%v, %v) = %d, want %d", c.v, c.p, got, c.want)
		}
	}
	// 391 batches (a redis round): p99 is rank ceil(387.09) = 388.
	v := make([]int64, 391)
	for i := range v {
		v[i] = int64(i + 1)
	}
	if got := Percentile(v, 99); got != 388 {
		t.Errorf("p99 of 1..391 = %d, want 388", got)
	}
}
