//go:build linux

package abseries

import (
	"math"
	"math/rand/v2"
	"testing"
)

// stepSeries draws kernels × boots boot medians around 1000 with
// relative spread sd, kernel k multiplied by factor(k).
func stepSeries(rng *rand.Rand, kernels, boots int, sd float64, factor func(k int) float64) [][]float64 {
	out := make([][]float64, kernels)
	for k := range out {
		for range boots {
			out[k] = append(out[k], 1000*factor(k)*math.Exp(sd*rng.NormFloat64()))
		}
	}
	return out
}

func TestDetectStep(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	changed := stepSeries(rng, 8, 5, 0.01, func(k int) float64 {
		if k >= 4 {
			return 1.10
		}
		return 1
	})
	flat := stepSeries(rng, 8, 5, 0.01, func(int) float64 { return 1 })
	res := Detect([][][]float64{changed, flat}, DefaultOptions)
	if n := len(res[0].Changes); n != 1 {
		t.Fatalf("changed row: %d changes %+v, want 1", n, res[0].Changes)
	}
	c := res[0].Changes[0]
	if c.After != 3 || !(c.Lo < 1.10 && 1.10 < c.Hi) || math.Abs(c.Ratio-1.10) > 0.01 || !(c.Q <= 0.05) || !(c.P <= c.Q) {
		t.Errorf("change %+v: want after kernel 3, ratio 1.10 within its interval, q <= 0.05", c)
	}
	if len(res[1].Changes) != 0 || !(res[1].Q > 0.05) {
		t.Errorf("flat row: changes %+v, q %v, want none", res[1].Changes, res[1].Q)
	}
	// mde: a spread of 1% over 5 boots a kernel sees a few percent.
	for _, m := range []float64{res[1].MDE, res[1].MDEEnd} {
		if !(m > 0.005 && m < 0.05) {
			t.Errorf("flat row: mde %v, want a few percent", m)
		}
	}
	if !(res[1].MDEEnd > res[1].MDE) {
		t.Errorf("mde at the end %v, in the middle %v: want the end's larger", res[1].MDEEnd, res[1].MDE)
	}
	if math.Abs(res[1].Sigma-0.01) > 0.003 {
		t.Errorf("sigma %v, want about 0.01", res[1].Sigma)
	}
	if len(res[0].Centers) != 8 || math.Abs(res[0].Centers[6]/res[0].Centers[1]-1.1) > 0.02 {
		t.Errorf("centers %v", res[0].Centers)
	}
}

func TestDetectTwoSteps(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	meds := stepSeries(rng, 8, 5, 0.01, func(k int) float64 {
		switch {
		case k >= 6:
			return 0.9
		case k >= 2:
			return 1.2
		}
		return 1
	})
	res := Detect([][][]float64{meds}, DefaultOptions)[0]
	if len(res.Changes) != 2 || res.Changes[0].After != 1 || res.Changes[1].After != 5 {
		t.Fatalf("changes %+v, want after kernels 1 and 5", res.Changes)
	}
	if r := res.Changes[1].Ratio; math.Abs(r-0.75) > 0.02 {
		t.Errorf("second change's ratio %v, want 0.9/1.2 = 0.75 (the segments between the changes)", r)
	}
}

// A family: the same step is found alone, not among 100 rows of which
// 99 are flat, where its p does not reach 0.05/100.
func TestDetectFamily(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	step := func(k int) float64 {
		if k >= 2 {
			return 1.018
		}
		return 1
	}
	weak := stepSeries(rng, 6, 3, 0.01, step)
	alone := Detect([][][]float64{weak}, DefaultOptions)[0]
	rows := [][][]float64{weak}
	for range 99 {
		rows = append(rows, stepSeries(rng, 6, 3, 0.01, func(int) float64 { return 1 }))
	}
	fam := Detect(rows, DefaultOptions)
	if len(alone.Changes) != 1 || len(fam[0].Changes) != 0 || !(fam[0].Q > alone.Q) {
		t.Errorf("alone %d changes (q %v), in a family of 100 %d (q %v): want 1 and 0", len(alone.Changes), alone.Q, len(fam[0].Changes), fam[0].Q)
	}
}

func TestDetectUntested(t *testing.T) {
	res := Detect([][][]float64{{{1, 2}, {3}}, {{1, 2}}, {{1, math.NaN()}, {1, 2}}}, DefaultOptions)
	for i, r := range res {
		if r.Untested == "" || !math.IsNaN(r.P) || len(r.Changes) != 0 {
			t.Errorf("row %d: %+v, want untested", i, r)
		}
	}
}

// Ties: boot medians all equal in each kernel, apart between them (a
// quantized metric): the change is found, with no division by zero.
func TestDetectQuantized(t *testing.T) {
	meds := [][]float64{{5, 5, 5}, {5, 5, 5}, {7, 7, 7}, {7, 7, 7}}
	res := Detect([][][]float64{meds}, DefaultOptions)[0]
	if len(res.Changes) != 1 || res.Changes[0].After != 1 || math.Abs(res.Changes[0].Ratio-1.4) > 1e-9 {
		t.Errorf("%+v, want one change after kernel 1 of 1.4", res.Changes)
	}
	flat := Detect([][][]float64{{{5, 5, 5}, {5, 5, 5}, {5, 5, 5}}}, DefaultOptions)[0]
	if len(flat.Changes) != 0 || flat.P < 0.5 {
		t.Errorf("all equal: %+v, p %v, want no change", flat.Changes, flat.P)
	}
}

// maxT against the two-sample t computed directly at every split.
func TestMaxT(t *testing.T) {
	x := []float64{1, 2, 3, 2, 5, 6, 5, 7, 6}
	cut := []int{3, 6}
	want, at := 0.0, -1
	for j, b := range cut {
		m1, v1 := meanVar(x[:b])
		m2, v2 := meanVar(x[b:])
		n1, n2 := float64(b), float64(len(x)-b)
		sp := (v1*(n1-1) + v2*(n2-1)) / (n1 + n2 - 2)
		if tt := math.Abs(m2-m1) / math.Sqrt(sp*(1/n1+1/n2)); tt > want {
			want, at = tt, j
		}
	}
	got, j := maxT(x, cut)
	if math.Abs(got-want) > 1e-9*want || j != at {
		t.Errorf("maxT %v at %d, want %v at %d", got, j, want, at)
	}
}

func TestBootsFor(t *testing.T) {
	n := BootsFor(0.10, 0.03, 8, 86, 0.05, 0.8, 0, 50)
	if n < MinBoots {
		t.Fatalf("BootsFor: %d", n)
	}
	if StepPower(math.Log1p(0.10), 0.03, float64(n), 8, 3, 0.05/86, 0) < 0.8 || StepPower(math.Log1p(0.10), 0.03, float64(n-1), 8, 3, 0.05/86, 0) >= 0.8 && n > MinBoots {
		t.Errorf("BootsFor %d is not the least n whose power at 10%% is 80%%", n)
	}
	// The allowance the test estimates costs power that its floor alone
	// (MDEShift's τ) does not count.
	at := math.Log1p(0.10)
	if p := StepPower(at, 0.03, 5, 8, 3, 0.05/86, 0.5); !(p > 0.05 && p < 1) {
		t.Errorf("StepPower %v", p)
	}
	if n := BootsFor(0.10, 0.034, 8, 86, 0.05, 0.9, 0.5, 100); MDEShift(0.034, float64(n-1), 8, 3, 0.05/86, 0.9, 0.5) > at {
		t.Errorf("BootsFor with offsets: %d boots, as many as the floor's mde alone asks: the estimated allowance is not counted", n)
	}
	if BootsFor(0.10, 1, 8, 86, 0.05, 0.8, 0, 50) != 0 {
		t.Errorf("a spread of 100%% reaches 10%% in 50 boots?")
	}
}

// Seeded: the same rows give the same p; another seed another draw of
// permutations, a p close to it.
func TestDetectSeeded(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	s, _, _ := newSeries(stepSeries(rng, 6, 4, 0.02, func(k int) float64 { return 1 + 0.01*float64(k%2) }))
	p := func(seed uint64) float64 {
		o := DefaultOptions
		o.Seed = seed
		p, _ := s.permute(0, 6, rand.New(rand.NewPCG(seed, 0)), o)
		return p
	}
	a, b, c := p(38), p(38), p(39)
	if a != b || !(a > 0 && a < 1) || a == c || math.Abs(a-c) > 0.5*a {
		t.Errorf("p %v, again %v, another seed %v: want equal, then close", a, b, c)
	}
}

// TestDetectOffsets: kernels of one level, each moved by its own offset
// (the last by 1.2 boot spreads, at 20 boots): the permutation sees the kernels
// differ, the offset test does not call it a step, and the kernel is
// named as a blip; a drift of 2% a kernel is named as drift.
func TestDetectOffsets(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	blip := make([][]float64, 8)
	for k := range blip {
		for i := range 20 {
			blip[k] = append(blip[k], 1000*(1+0.005*float64(i-10+k%3)/5.8))
		}
	}
	for i := range blip[7] {
		blip[7][i] *= 1.006
	}
	drift := stepSeries(rng, 8, 5, 0.005, func(k int) float64 { return math.Pow(1.02, float64(k)) })
	res := []RowResult{Detect([][][]float64{blip}, DefaultOptions)[0], Detect([][][]float64{drift}, DefaultOptions)[0]}
	if len(res[0].Changes) != 0 || res[0].Blip != 7 || math.Abs(res[0].BlipRatio-1.006) > 0.003 {
		t.Errorf("the last kernel 0.6%% apart: changes %+v, blip %d ratio %v, want none, kernel 7 at +0.6%%", res[0].Changes, res[0].Blip, res[0].BlipRatio)
	}
	if math.Abs(res[1].Drift-1.02) > 0.005 {
		t.Errorf("2%% a kernel: drift %v, changes %+v, want drift 1.02", res[1].Drift, res[1].Changes)
	}
}

func TestMinP(t *testing.T) {
	for _, c := range []struct {
		n, before int
		want      float64
	}{{6, 3, 0.1}, {12, 6, 2.0 / 924}, {12, 9, 2.0 / 220}, {2, 1, 1}} {
		if got := MinP(c.n, c.before); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("MinP(%d, %d) = %v, want %v", c.n, c.before, got, c.want)
		}
	}
}
