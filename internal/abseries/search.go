//go:build linux

package abseries

import (
	"fmt"
	"math"
	"slices"

	"github.com/kbench/kbench/internal/abstat"
)

// SearchOptions are a bisection's knobs.
type SearchOptions struct {
	// Wrong is the most chance the search may have of ending at the
	// wrong image (0.10): each step's sequential test is run at error
	// bounds Wrong/steps on both sides, steps = ⌈log2(images+1)⌉.
	Wrong float64
	// MinBoots is the fewest boots a step takes before it may decide
	// (2: one boot's outlier alone decides nothing), MaxBoots the most:
	// a step still undecided at MaxBoots ends the search, undecided.
	MinBoots, MaxBoots int
}

// DefaultSearchOptions are the bisection's defaults.
var DefaultSearchOptions = SearchOptions{Wrong: 0.10, MinBoots: 2, MaxBoots: 30}

// Decision is what one step of a bisection decided of its image.
type Decision string

const (
	LikeGood   Decision = "good"
	LikeBad    Decision = "bad"
	CannotTell Decision = "undecided"
)

// Step is one step of a bisection: an image booted until decided.
type Step struct {
	Image    int
	Boots    int
	Decision Decision
	// LLR is the log likelihood ratio of "like bad" against "like good"
	// at the step's end.
	LLR float64
}

// SearchResult is where a bisection ended.
type SearchResult struct {
	// FirstBad is the first image like the bad kernel, from 0; Images
	// (one past the last image) stands for the bad kernel itself: no
	// image between was bad. -1 where the search ended undecided.
	FirstBad int
	// Lo and Hi bracket the first bad image: every image up to Lo (-1,
	// the good kernel) was decided good, Hi (Images, the bad kernel)
	// and the images after it bad; the first bad is in (Lo, Hi].
	Lo, Hi int
	Steps  []Step
	// Skipped are the images that could not be booted (they do not
	// build), in the order skipped, as git bisect skip marks them.
	Skipped   []int
	Boots     int
	Undecided bool
	Done      bool
}

// Search is a noise-aware bisection over the images between a good
// and a bad kernel, for one row: a runner asks Next which image to
// boot, boots it, and gives the row's boot median to Observe, until
// Next says done.
//
// Each step is Wald's sequential probability ratio test on the step's
// boot medians x (on the row's scale) between "like good" (normal, mean
// the good kernel's mean μg) and "like bad" (mean μb), both with the
// spread σ pooled over the good and bad kernels' boots: after each boot
// the log likelihood ratio Λ = Σ (μb-μg)/σ² · (x - (μg+μb)/2) is
// compared with Wald's bounds log((1-ε)/ε) (bad) and log(ε/(1-ε))
// (good), ε = Wrong/steps. Where neither is crossed at MaxBoots the
// search ends undecided.
type Search struct {
	images int
	opts   SearchOptions
	sc     abstat.Scale
	mg, mb float64 // means on the scale
	s2     float64 // pooled variance on the scale
	upper  float64 // Wald's bounds
	lower  float64
	res    SearchResult
	cur    *Step
}

// NewSearch is a bisection over images images between a kernel whose
// row's boot medians are good and one whose are bad, in the row's
// units (both with at least MinBoots boots).
func NewSearch(good, bad []float64, images int, o SearchOptions) (*Search, error) {
	switch {
	case len(good) < MinBoots || len(bad) < MinBoots:
		return nil, fmt.Errorf("%d good and %d bad boots: want at least %d each, for a spread", len(good), len(bad), MinBoots)
	case images < 0:
		return nil, fmt.Errorf("%d images: want at least 0", images)
	case !(o.Wrong > 0 && o.Wrong < 0.5):
		return nil, fmt.Errorf("wrong %v: want a chance above 0 and below 0.5", o.Wrong)
	case o.MinBoots < 1 || o.MaxBoots < o.MinBoots:
		return nil, fmt.Errorf("boots per step %d to %d: want at least 1, and a most of at least the least", o.MinBoots, o.MaxBoots)
	}
	s := &Search{images: images, opts: o, sc: abstat.ScaleOf(good, bad)}
	g, b := s.sc.ToAll(good), s.sc.ToAll(bad)
	var vg, vb float64
	s.mg, vg = meanVar(g)
	s.mb, vb = meanVar(b)
	if s.mg == s.mb {
		return nil, fmt.Errorf("good and bad boots have one mean: nothing to bisect")
	}
	s.s2 = (vg*float64(len(g)-1) + vb*float64(len(b)-1)) / float64(len(g)+len(b)-2)
	eps := o.Wrong / float64(Steps(images))
	s.upper, s.lower = math.Log((1-eps)/eps), math.Log(eps/(1-eps))
	s.res = SearchResult{FirstBad: -1, Lo: -1, Hi: images}
	s.settle()
	return s, nil
}

// Steps is the most steps a bisection over images images takes:
// ⌈log2(images+1)⌉, the images+1 places a first bad image can be.
func Steps(images int) int {
	n := 0
	for 1<<n < images+1 {
		n++
	}
	return max(n, 1)
}

// settle starts the next step at the image of the bracket nearest its
// middle that is not skipped (the later of two as near), or ends the
// search where none is left.
func (s *Search) settle() {
	mid, next := s.res.Lo+(s.res.Hi-s.res.Lo)/2, -1
	for i := s.res.Lo + 1; i < s.res.Hi; i++ {
		if !slices.Contains(s.res.Skipped, i) && (next < 0 || abs(i-mid) <= abs(next-mid)) {
			next = i
		}
	}
	if next < 0 {
		s.res.FirstBad, s.res.Done = s.res.Hi, true
		s.cur = nil
		return
	}
	s.cur = &Step{Image: next}
}

func abs(n int) int { return max(n, -n) }

// Skip marks image, Next's and not booted yet, as one that cannot be
// booted (it does not build), as git bisect skip does: the search goes
// on at another image of the bracket. Where only skipped images are
// left, the first bad is Hi or one of them (Between).
func (s *Search) Skip(image int) error {
	if s.res.Done || image != s.cur.Image || s.cur.Boots > 0 {
		return fmt.Errorf("image %d: want the step's image before its first boot", image)
	}
	s.res.Skipped = append(s.res.Skipped, image)
	s.settle()
	return nil
}

// Between are the skipped images in the bracket (Lo, Hi): where the
// search is done, the first bad is one of them or Hi.
func (r SearchResult) Between() []int {
	var in []int
	for _, i := range r.Skipped {
		if i > r.Lo && i < r.Hi {
			in = append(in, i)
		}
	}
	slices.Sort(in)
	return in
}

// Next is the image to boot next; done where the search has ended.
func (s *Search) Next() (image int, done bool) {
	if s.res.Done {
		return -1, true
	}
	return s.cur.Image, false
}

// Observe records one boot of image with the row's boot median
// median: the image must be Next's.
func (s *Search) Observe(image int, median float64) error {
	switch {
	case s.res.Done:
		return fmt.Errorf("image %d: the search has ended", image)
	case image != s.cur.Image:
		return fmt.Errorf("image %d: want %d, the image of this step", image, s.cur.Image)
	case math.IsNaN(median) || math.IsInf(median, 0) || (s.sc.Log && !(median > 0)):
		return fmt.Errorf("boot median %v: want a finite value, positive where the row's are", median)
	}
	x := s.sc.To(median)
	st := s.cur
	st.Boots++
	s.res.Boots++
	st.LLR += s.llr(x)
	if st.Boots < s.opts.MinBoots {
		return nil
	}
	switch {
	case st.LLR >= s.upper:
		st.Decision = LikeBad
		s.res.Hi = st.Image
	case st.LLR <= s.lower:
		st.Decision = LikeGood
		s.res.Lo = st.Image
	case st.Boots >= s.opts.MaxBoots:
		st.Decision = CannotTell
		s.res.Steps = append(s.res.Steps, *st)
		s.res.Undecided, s.res.Done, s.cur = true, true, nil
		return nil
	default:
		return nil
	}
	s.res.Steps = append(s.res.Steps, *st)
	s.settle()
	return nil
}

// llr is one boot's log likelihood ratio of bad against good.
func (s *Search) llr(x float64) float64 {
	d := s.mb - s.mg
	y := x - (s.mg+s.mb)/2
	if s.s2 == 0 {
		switch {
		case d*y > 0:
			return math.Inf(1)
		case d*y < 0:
			return math.Inf(-1)
		}
		return 0
	}
	return d / s.s2 * y
}

// Result is the search so far: final once Done.
func (s *Search) Result() SearchResult {
	r := s.res
	r.Steps = append([]Step(nil), r.Steps...)
	r.Skipped = slices.Clone(r.Skipped)
	return r
}

// Bounds are the step's Wald bounds on the log likelihood ratio: at or
// above upper an image is like bad, at or below lower like good.
func (s *Search) Bounds() (lower, upper float64) { return s.lower, s.upper }
