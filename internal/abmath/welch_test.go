//go:build linux

package abmath

import (
	"math"
	"testing"
)

// TestWelch checks the library's t-test against Student's t table (an
// independent check of its p-values: samples built to give a known t and
// df) and a textbook example.
func TestWelch(t *testing.T) {
	// Two samples of n with standard deviation 1 whose means are d apart
	// give t = d/sqrt(2/n) with df = 2n-2.
	for _, c := range []struct {
		n     int
		tt, p float64
	}{
		{2, 4.302653, 0.05},  // df 2
		{3, 2.776445, 0.05},  // df 4
		{6, 2.228139, 0.05},  // df 10
		{2, 9.924843, 0.01},  // df 2
		{3, 4.604095, 0.01},  // df 4
		{11, 2.085963, 0.05}, // df 20
		{3, 0, 1},
	} {
		d := c.tt * math.Sqrt(2/float64(c.n))
		var a, b []float64
		for i := range c.n {
			// n values of mean 0 and sample SD 1.
			x := float64(2*i-(c.n-1)) * math.Sqrt(12/float64(c.n*(c.n+1))) / 2
			a, b = append(a, x), append(b, x+d)
		}
		tt, df, p := Welch(a, b)
		if math.Abs(tt-c.tt) > 1e-6 || math.Abs(df-float64(2*c.n-2)) > 1e-9 || math.Abs(p-c.p) > 1e-5 {
			t.Errorf("n=%d: t=%.6f df=%g p=%.6f, want t=%.6f df=%d p=%.6f", c.n, tt, df, p, c.tt, 2*c.n-2, c.p)
		}
	}
	// Three boots a side can reach 0.05, which no rank test of 3+3 can:
	// t = 6/sqrt(2/3) = 7.348469 on 4 df, p = 0.0018 (the table's 0.01
	// critical value on 4 df is 4.604).
	a := []float64{100, 101, 99}
	b := []float64{106, 107, 105}
	tt, df, p := Welch(a, b)
	if math.Abs(tt-7.348469) > 1e-5 || math.Abs(df-4) > 1e-9 || p > 0.01 || p < 0.001 {
		t.Errorf("t=%g df=%g p=%g; want t=7.348, df=4, 0.001<p<0.01", tt, df, p)
	}
	// No spread: the means decide.
	if _, _, p := Welch([]float64{1, 1, 1}, []float64{2, 2, 2}); p != 0 {
		t.Errorf("no spread, apart: p=%g, want 0", p)
	}
	if _, _, p := Welch([]float64{1, 1, 1}, []float64{1, 1, 1}); p != 1 {
		t.Errorf("no spread, equal: p=%g, want 1", p)
	}
}

// TestTQuantile checks the t quantiles against Student's t table, and
// that no degrees of freedom panic: go-moremath's TDist does
// ("betainc: a or b too big") for infinite ones, which Welch's test of
// two sides without spread used to hand on (issue 28).
func TestTQuantile(t *testing.T) {
	for _, c := range []struct{ p, df, want float64 }{
		{0.975, 1, 12.706205}, {0.975, 2, 4.302653}, {0.975, 4, 2.776445}, {0.975, 10, 2.228139},
		{0.995, 4, 4.604095}, {0.8, 4, 0.940965}, {0.025, 4, -2.776445}, {0.975, 1000, 1.962339},
		{0.975, math.Inf(1), 1.959964}, {0.975, 1e300, 1.959964}, {0.5, 3, 0},
	} {
		if got := TQuantile(c.p, c.df); math.Abs(got-c.want) > 1e-5 {
			t.Errorf("t(%g, df %g) = %.6f, want %.6f", c.p, c.df, got, c.want)
		}
	}
	for _, df := range []float64{0, -1, math.NaN()} {
		if got := TQuantile(0.975, df); !math.IsNaN(got) {
			t.Errorf("t(0.975, df %g) = %g, want NaN", df, got)
		}
	}
}
