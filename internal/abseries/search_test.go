//go:build linux

package abseries

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// drive runs a search whose images before first are like good (mean
// 100) and the rest like bad (110), spread sd, and returns its result.
func drive(t *testing.T, rng *rand.Rand, images, first int, sd float64, o SearchOptions) SearchResult {
	t.Helper()
	draw := func(m float64) float64 { return m * math.Exp(sd*rng.NormFloat64()) }
	var good, bad []float64
	for range 6 {
		good, bad = append(good, draw(100)), append(bad, draw(110))
	}
	s, err := NewSearch(good, bad, images, o)
	if err != nil {
		t.Fatal(err)
	}
	for range 1000 {
		img, done := s.Next()
		if done {
			return s.Result()
		}
		m := 100.0
		if img >= first {
			m = 110
		}
		if err := s.Observe(img, draw(m)); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatal("search did not end in 1000 boots")
	return SearchResult{}
}

func TestSearchQuiet(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for first := 0; first <= 16; first++ {
		r := drive(t, rng, 16, first, 0.01, DefaultSearchOptions)
		if r.FirstBad != first || r.Undecided || len(r.Steps) > Steps(16) || r.Boots != 2*len(r.Steps) {
			t.Errorf("first bad %d: %+v, want it found in at most %d steps of 2 boots", first, r, Steps(16))
		}
		for _, st := range r.Steps {
			want := LikeGood
			if st.Image >= first {
				want = LikeBad
			}
			if st.Decision != want {
				t.Errorf("first bad %d: step %+v, want %s", first, st, want)
			}
		}
	}
}

// A spread as large as the step: steps take more boots, some hit the cap.
func TestSearchNoisy(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	o := DefaultSearchOptions
	o.MaxBoots = 3
	var undecided int
	for range 50 {
		r := drive(t, rng, 16, 5, 0.10, o)
		if r.Undecided {
			undecided++
			last := r.Steps[len(r.Steps)-1]
			if r.FirstBad != -1 || last.Decision != CannotTell || last.Boots != 3 || !(r.Lo < r.Hi) {
				t.Errorf("undecided: %+v", r)
			}
		}
	}
	if undecided == 0 {
		t.Errorf("a spread of 10%% against a step of 10%% never hit a cap of 3 boots")
	}
}

func TestSearchErrors(t *testing.T) {
	for _, c := range []struct {
		good, bad []float64
		images    int
		o         SearchOptions
	}{
		{[]float64{1}, []float64{2, 2}, 4, DefaultSearchOptions},
		{[]float64{1, 1.1}, []float64{2, 2}, -1, DefaultSearchOptions},
		{[]float64{1, 1.1}, []float64{2, 2}, 4, SearchOptions{Wrong: 0.6, MinBoots: 1, MaxBoots: 2}},
		{[]float64{1, 1.1}, []float64{2, 2}, 4, SearchOptions{Wrong: 0.1, MinBoots: 3, MaxBoots: 2}},
		{[]float64{1, 2}, []float64{2, 1}, 4, DefaultSearchOptions},
	} {
		if _, err := NewSearch(c.good, c.bad, c.images, c.o); err == nil {
			t.Errorf("NewSearch(%v, %v, %d, %+v): no error", c.good, c.bad, c.images, c.o)
		}
	}
	s, _ := NewSearch([]float64{1, 1.1}, []float64{2, 2.1}, 4, DefaultSearchOptions)
	if img, _ := s.Next(); img != 1 {
		t.Errorf("first image %d of 4, want 1 (the middle of -1..4)", img)
	}
	if s.Observe(3, 1) == nil || s.Observe(1, -1) == nil || s.Observe(1, math.NaN()) == nil {
		t.Errorf("Observe took a wrong image or median")
	}
	empty, _ := NewSearch([]float64{1, 1.1}, []float64{2, 2.1}, 0, DefaultSearchOptions)
	if _, done := empty.Next(); !done || empty.Result().FirstBad != 0 {
		t.Errorf("no images: %+v, want done, the bad kernel first", empty.Result())
	}
}

func TestSteps(t *testing.T) {
	for images, want := range map[int]int{0: 1, 1: 1, 2: 2, 3: 2, 7: 3, 15: 4, 16: 5} {
		if got := Steps(images); got != want {
			t.Errorf("Steps(%d) = %d, want %d", images, got, want)
		}
	}
}

// Images that do not build are skipped: the search ends at the first
// bad image it could boot, naming the skipped ones that might be it.
func TestSearchSkip(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	skip := map[int]bool{1: true, 3: true, 4: true}
	for first := 0; first <= 8; first++ {
		good, bad := []float64{100, 101, 99}, []float64{110, 111, 109}
		s, err := NewSearch(good, bad, 8, DefaultSearchOptions)
		if err != nil {
			t.Fatal(err)
		}
		for {
			img, done := s.Next()
			if done {
				break
			}
			if skip[img] {
				if err := s.Skip(img); err != nil {
					t.Fatal(err)
				}
				continue
			}
			m := 100.0
			if img >= first {
				m = 110
			}
			if err := s.Observe(img, m*math.Exp(0.005*rng.NormFloat64())); err != nil {
				t.Fatal(err)
			}
			if err := s.Skip(img); err == nil {
				t.Fatalf("skip of image %d after a boot of it: no error", img)
			}
		}
		r := s.Result()
		want := first // the first bootable image at or after first
		for skip[want] {
			want++
		}
		var between []int // the skipped images after the bootable one before want
		for i := want - 1; i >= 0 && skip[i]; i-- {
			between = append([]int{i}, between...)
		}
		if r.FirstBad != want || r.Undecided || !slices.Equal(r.Between(), between) {
			t.Errorf("first bad %d: ended at %d, between %v (%+v), want %d, between %v", first, r.FirstBad, r.Between(), r, want, between)
		}
		for _, i := range r.Skipped {
			if !skip[i] {
				t.Errorf("first bad %d: skipped %d, which builds", first, i)
			}
		}
	}
}
