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
	for range 100000 {
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
	t.Fatal("search did not end in 100000 boots")
	return SearchResult{}
}

// quiet is a search whose false "not one step" (at most Wrong) is rare
// enough for the quiet tests to expect every step decided.
var quiet = SearchOptions{Wrong: 0.001, Power: 0.9}

// TestSearchQuiet: a clear step is found, of one image (1% spread) or
// of separate builds (0.5%: the allowance for their own offsets,
// estimated from few images at the few rounds a clear step takes, is
// far below the 10% step).
func TestSearchQuiet(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	builds := quiet
	builds.Offset = 0.5
	for i := range 34 {
		first := i % 17
		r := drive(t, rng, 16, first, []float64{0.01, 0.005}[i/17], []SearchOptions{quiet, builds}[i/17])
		rounds := 0
		for _, st := range r.Steps {
			rounds += st.Rounds
		}
		if r.FirstBad != first || len(r.Steps) > Steps(16) || r.Boots != 3*rounds {
			t.Errorf("first bad %d: %+v, want it found in at most %d steps", first, r, Steps(16))
		}
		for _, st := range r.Steps {
			want := LikeGood
			if st.Image >= first {
				want = LikeBad
			}
			if st.Decision != want || math.Abs(st.Position-map[Decision]float64{LikeGood: 0, LikeBad: 1}[want]) > 0.35 {
				t.Errorf("first bad %d: step %+v, want %s", first, st, want)
			}
		}
	}
}

// TestSearchOrder: a step's rounds alternate good, image, bad with bad,
// image, good, so that a drift moves both references alike.
func TestSearchOrder(t *testing.T) {
	s, _ := NewSearch([]float64{1, 1.1}, []float64{2, 2.1}, 6, DefaultSearchOptions)
	var got []int
	for range 9 {
		k, _ := s.Next()
		got = append(got, k)
		s.Observe(k, 1+float64(len(got)%2)/10)
	}
	if want := []int{-1, 2, 6, 6, 2, -1, -1, 2, 6}; !slices.Equal(got, want) {
		t.Errorf("boots %v, want %v", got, want)
	}
}

// TestSearchBetween: an image halfway between good and bad ends the
// search as not one step, naming it, with no first bad image.
func TestSearchBetween(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	draw := func(m float64) float64 { return m * math.Exp(0.01*rng.NormFloat64()) }
	s, _ := NewSearch([]float64{100, 101}, []float64{110, 111}, 6, DefaultSearchOptions)
	for {
		k, done := s.Next()
		if done {
			break
		}
		m := map[bool]float64{true: 100, false: 110}[k < 0]
		if k >= 0 && k < 6 {
			m = 105
		}
		s.Observe(k, draw(m))
	}
	r := s.Result()
	last := r.Steps[len(r.Steps)-1]
	if r.FirstBad != -1 || last.Decision != Between || math.Abs(last.Position-0.5) > 0.1 {
		t.Errorf("an image halfway: %+v, want not one step at position 0.5", r)
	}
}

// TestSearchAllowance: separate builds whose step (10%) is the boot
// spread's: every image is within the allowance for its own offset of
// both good and bad, and the search ends undecided, naming no image,
// where one image would be placed.
func TestSearchAllowance(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	o := DefaultSearchOptions
	o.Offset = 0.5
	within := 0
	for i := range 20 {
		r := drive(t, rng, 6, i%7, 0.10, o)
		if r.Steps[len(r.Steps)-1].Decision == InAllowance {
			within++
		}
		if last := r.Steps[len(r.Steps)-1]; r.FirstBad >= 0 && r.FirstBad != i%7 || last.Decision == Between {
			t.Errorf("first bad %d: %+v, want it or undecided", i%7, r)
		}
		if last := r.Steps[len(r.Steps)-1]; last.Decision == InAllowance && last.Rounds == 3 {
			t.Errorf("within the allowance at 3 rounds: %+v, want the boots' noise ruled out first", last)
		}
	}
	if within < 15 {
		t.Errorf("%d of 20 searches ended within the allowance of both, want most", within)
	}
}

// A spread as large as the step, rounds sized for little power: some
// steps reach the last look.
func TestSearchNoisy(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	o := DefaultSearchOptions
	o.Power = 0.02
	var undecided int
	for range 50 {
		r := drive(t, rng, 16, 5, 0.10, o)
		if last := r.Steps[len(r.Steps)-1]; last.Decision == CannotTell {
			undecided++
			if r.FirstBad != -1 || last.Rounds < 3 || !(r.Lo < r.Hi) {
				t.Errorf("undecided: %+v", r)
			}
		}
	}
	if undecided == 0 {
		t.Errorf("a spread of 10%% against a step of 10%% never reached a last look at 3 rounds")
	}
}

func TestSearchErrors(t *testing.T) {
	for _, c := range []struct {
		good, bad []float64
		images    int
		o         SearchOptions
	}{
		{nil, []float64{2, 2}, 4, DefaultSearchOptions},
		{[]float64{1, 2}, []float64{2, 1}, 4, DefaultSearchOptions},
		{[]float64{1, math.NaN()}, []float64{2, 2.1}, 4, DefaultSearchOptions},
		{[]float64{1, 1.1}, []float64{2, math.Inf(1)}, 4, DefaultSearchOptions},
		// a difference far below the spread: too many rounds, refused
		// rather than planned (it looped near forever)
		{[]float64{99.9, 100.1}, []float64{99.9, 100.1 + 1e-10}, 4, DefaultSearchOptions},
		{[]float64{99.9, 100.1}, []float64{110, 111}, 4, SearchOptions{Wrong: 0.1, Power: 0.9, Step: 1e-12}},
	} {
		if _, err := NewSearch(c.good, c.bad, c.images, c.o); err == nil {
			t.Errorf("NewSearch(%v, %v, %d, %+v): no error", c.good, c.bad, c.images, c.o)
		}
	}
	s, _ := NewSearch([]float64{1, 1.1}, []float64{2, 2.1}, 4, DefaultSearchOptions)
	s.Observe(-1, 1)
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
		s, err := NewSearch(good, bad, 8, quiet)
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
		if r.FirstBad != want || !slices.Equal(r.Between(), between) {
			t.Errorf("first bad %d: ended at %d, between %v (%+v), want %d, between %v", first, r.FirstBad, r.Between(), r, want, between)
		}
		for _, i := range r.Skipped {
			if !skip[i] {
				t.Errorf("first bad %d: skipped %d, which builds", first, i)
			}
		}
	}
}
