//go:build linux

package abseries

import (
	"fmt"
	"math"
	"slices"

	"github.com/kbench/kbench/internal/abmath"
)

// SearchOptions are a bisection's knobs.
type SearchOptions struct {
	// Wrong bounds the chance of naming a wrong first bad image, and
	// apart from it that of "not one step" where there is one step.
	Wrong float64
	// Power is the chance an image halfway between good and bad is
	// found unlike both by a step's last look, where the step is Step
	// (relative, 0.05: 5%) or the confirmed difference if smaller.
	Power, Step float64
	// Offset is the least spread of a kernel's own offset allowed for,
	// as a multiple of the boot spread, as the series' Options.Offset:
	// 0 where every kernel boots one image, a separate build's layout
	// otherwise.
	Offset float64
}

// DefaultSearchOptions are the bisection's defaults.
var DefaultSearchOptions = SearchOptions{Wrong: 0.10, Power: 0.9}

// Decision is what one step of a bisection decided of its image.
type Decision string

const (
	LikeGood   Decision = "good"
	LikeBad    Decision = "bad"
	Between    Decision = "like neither good nor bad: not one step"
	CannotTell Decision = "undecided"
	// InAllowance: the image's differences from good and from bad are
	// both, with confidence, within what its own offset may make them.
	InAllowance Decision = "undecided: within the allowance for its own offset of both good and bad"
)

// Step is one step of a bisection: an image booted beside good and bad
// until decided, and what each measured.
type Step struct {
	Image    int
	Rounds   int
	Decision Decision
	// Good, Image and Bad are the step's centers of the three kernels'
	// boot medians, in the row's units; Position is where the image sat,
	// 0 at good's center, 1 at bad's.
	Good, ImageCenter, Bad, Position float64
}

// SearchResult is where a bisection ended.
type SearchResult struct {
	// FirstBad is the first image like the bad kernel, from 0; Images
	// (one past the last image) stands for the bad kernel itself: no
	// image between was bad. -1 where the search named none (its last
	// step undecided or between: Steps says which).
	FirstBad int
	// Lo and Hi bracket the first bad image: every image up to Lo (-1,
	// the good kernel) was decided good, Hi (Images, the bad kernel)
	// and the images after it bad; the first bad is in (Lo, Hi].
	Lo, Hi int
	Steps  []Step
	// Skipped are the images that could not be booted (they do not
	// build), in the order skipped, as git bisect skip marks them.
	Skipped []int
	Boots   int
	Done    bool
}

// Search is a bisection over the images between a good and a bad kernel,
// for one row: a runner asks Next which kernel to boot (an image, or
// good or bad beside it), boots it, and gives the row's boot median to
// Observe, until Next says done. Each step boots rounds of good, image
// and bad (reversed every other round) and, at each look (plan), on
// the row's scale with σ pooled over every group of the search, t-tests
// contrasts of the three means, each kernel's own offset allowed for
// (allowance): the image unlike both good and bad (two-sided), not one
// step; else past the midpoint toward bad and unlike good, bad, or the
// mirror, good; within the allowance of both, undecided.
// docs/comparing.md, "Bisection over images", argues the rule and
// states its promise.
type Search struct {
	images int
	opts   SearchOptions
	sc     abmath.Scale
	sign   float64   // +1 where bad is above good on the scale
	looks  []int     // a step's looks, in rounds
	levels []float64 // each look's one-sided level
	ss, df float64   // sums of squares and degrees of freedom of decided steps
	x      [3][]float64
	ends   [2]center   // good's and bad's boots in the decided steps
	placed [2][]center // the images decided good, and bad
	res    SearchResult
	cur    *Step
}

// NewSearch is a bisection over images images between a kernel whose
// row's boot medians are good and one whose are bad, in the row's units,
// from a confirmation that they differ (its medians set the scale and
// the direction of bad).
func NewSearch(good, bad []float64, images int, o SearchOptions) (*Search, error) {
	switch {
	case len(good) == 0 || len(bad) == 0:
		return nil, fmt.Errorf("%d good and %d bad boots: want at least one each", len(good), len(bad))
	case images < 0:
		return nil, fmt.Errorf("%d images: want at least 0", images)
	case !(o.Wrong > 0 && o.Wrong < 0.5):
		return nil, fmt.Errorf("wrong %v: want a chance above 0 and below 0.5", o.Wrong)
	case !finite(good) || !finite(bad):
		return nil, fmt.Errorf("good %v, bad %v: want finite boot medians", good, bad)
	case !(o.Power > 0 && o.Power < 1) || !(o.Step >= 0) || !(o.Offset >= 0):
		return nil, fmt.Errorf("power %v, step %v, offset %v: want a chance above 0 and below 1, a step and an offset of 0 or more", o.Power, o.Step, o.Offset)
	}
	s := &Search{images: images, opts: o, sc: abmath.ScaleOf(good, bad)}
	mg, vg := meanVar(s.sc.ToAll(good))
	mb, vb := meanVar(s.sc.ToAll(bad))
	if mg == mb {
		return nil, fmt.Errorf("good and bad boots have one mean: nothing to bisect")
	}
	s.sign = math.Copysign(1, mb-mg)
	d := math.Abs(mb - mg)
	if o.Step > 0 {
		d = min(d, s.sc.Shift(o.Step, (mg+mb)/2))
	}
	v := 0.0
	if df := len(good) + len(bad) - 2; df > 0 {
		v = (vg*float64(len(good)-1) + vb*float64(len(bad)-1)) / float64(df)
	}
	if err := s.plan(d, v); err != nil {
		return nil, err
	}
	s.res = SearchResult{FirstBad: -1, Lo: -1, Hi: images}
	s.settle()
	return s, nil
}

// plan sets a step's looks and levels from the confirmation's step d
// and variance v on the scale: at most n rounds, enough for an image
// halfway to differ from good and from bad (contrasts of variance 2v/n,
// shift d/2) at the last look's two-sided level (at least half the
// step's, t on 3n-3 degrees of freedom) with power 1-(1-Power)/2 each,
// both with Power; the looks n, n/2, ... down to 3, each spending
// Wrong/steps in proportion to its rounds. No step's test uses the
// confirmation's boots, so each stays exact. A step that would need
// more than maxRounds rounds is refused: no run boots that many.
func (s *Search) plan(d, v float64) error {
	o := s.opts
	step := o.Wrong / float64(Steps(s.images))
	z := abmath.TQuantile(1-(1-o.Power)/2, math.Inf(1))
	need := func(df float64) float64 { k := abmath.TQuantile(1-step/4, df) + z; return 8 * k * k * v / (d * d) }
	if r := need(math.Inf(1)); !(r <= maxRounds) {
		return fmt.Errorf("a step of %.3g against a boot spread of %.3g needs %.3g rounds of good, image and bad: more than %.0g; give a larger -target", d, math.Sqrt(v), r, maxRounds)
	}
	n := max(3, int(math.Ceil(need(math.Inf(1)))))
	for need(float64(3*n-3)) > float64(n) {
		n++
	}
	sum := 0
	for l := n; l >= 3; l /= 2 {
		s.looks = append([]int{l}, s.looks...)
		sum += l
	}
	for _, l := range s.looks {
		s.levels = append(s.levels, step*float64(l)/float64(sum))
	}
	return nil
}

// maxRounds bounds a step's rounds (three boots each), far above any
// run's, so that the plan's arithmetic stays in int's range.
const maxRounds = 1e9

// finite reports whether every x is neither NaN nor infinite.
func finite(xs []float64) bool {
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
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
// search where none is left. The step's boots so far (a skip's good and
// bad, taken beside no image yet) stay its references.
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

// Skip marks image, the step's and not booted in it yet, as one that
// cannot be booted (it does not build), as git bisect skip does: the
// search goes on at another image of the bracket, keeping the step's
// good and bad boots. Where only skipped images are left, the first bad
// is Hi or one of them (Between).
func (s *Search) Skip(image int) error {
	if s.res.Done || image != s.cur.Image || len(s.x[1]) > 0 {
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

// Next is the kernel to boot next: an image from 0, -1 for good, Images
// for bad; done where the search has ended.
func (s *Search) Next() (image int, done bool) {
	if s.res.Done {
		return 0, true
	}
	return []int{-1, s.cur.Image, s.images}[s.role()], false
}

// role is the group the next boot belongs to: 0 good, 1 image, 2 bad.
func (s *Search) role() int {
	n := len(s.x[0]) + len(s.x[1]) + len(s.x[2])
	r, i := n/3, n%3
	if r%2 == 1 {
		i = 2 - i
	}
	return i
}

// Observe records one boot of image (as Next gave it) with the row's
// boot median median.
func (s *Search) Observe(image int, median float64) error {
	if s.res.Done {
		return fmt.Errorf("image %d: the search has ended", image)
	}
	if want, _ := s.Next(); image != want {
		return fmt.Errorf("kernel %d: want %d, the next of this step", image, want)
	}
	if math.IsNaN(median) || math.IsInf(median, 0) || (s.sc.Log && !(median > 0)) {
		return fmt.Errorf("boot median %v: want a finite value, positive where the row's are", median)
	}
	g := s.role()
	s.x[g] = append(s.x[g], s.sc.To(median))
	s.res.Boots++
	if s.res.Boots%3 != 0 {
		return nil // mid-round
	}
	if look := slices.Index(s.looks, len(s.x[1])); look >= 0 {
		s.judge(look)
	}
	return nil
}

// judge tests the step's contrasts at look (after its rounds), and
// ends the step where they decide (or, at the last look, undecided).
// Each kernel's own offset spreads τ (allowance); a difference of two
// kernels' means has variance 2σ²/n + 2τ².
func (s *Search) judge(look int) {
	st := s.cur
	n := float64(len(s.x[1]))
	var m [3]float64
	ss, df := s.ss, s.df
	for i, v := range s.x {
		mi, vi := meanVar(v)
		m[i], ss, df = mi, ss+vi*(n-1), df+n-1
	}
	sd := math.Sqrt(ss / df)
	c := abmath.TQuantile(1-s.levels[look], df)
	g, x, b := m[0], m[1], m[2]
	tau2 := s.allowance(sd)
	q := math.Sqrt(2*sd*sd/n + 2*tau2)
	upG, downB := s.sign*(x-g)/q, s.sign*(b-x)/q
	nearB := s.sign * (x - (g+b)/2) / (sd * math.Sqrt(1.5/n))
	st.Rounds = int(n)
	st.Good, st.ImageCenter, st.Bad, st.Position = s.sc.From(g), s.sc.From(x), s.sc.From(b), (x-g)/(b-g)
	switch c2 := abmath.TQuantile(1-s.levels[look]/2, df); {
	case math.Abs(upG) > c2 && math.Abs(downB) > c2:
		st.Decision = Between
	case nearB > c && upG > c:
		st.Decision, s.res.Hi = LikeBad, st.Image
	case -nearB > c && downB > c:
		st.Decision, s.res.Lo = LikeGood, st.Image
	case max(math.Abs(x-g), math.Abs(b-x))+c2*sd*math.Sqrt(2/n) < c2*math.Sqrt(2*tau2):
		st.Decision = InAllowance
	case look == len(s.looks)-1:
		st.Decision = CannotTell
	default:
		return
	}
	s.res.Steps = append(s.res.Steps, *st)
	s.ss, s.df, s.x = ss, df, [3][]float64{}
	side := slices.Index([]Decision{LikeGood, LikeBad}, st.Decision)
	if side < 0 {
		s.res.Done, s.cur = true, nil
		return
	}
	s.placed[side] = append(s.placed[side], center{x * n, n})
	s.ends[0], s.ends[1] = center{s.ends[0].sum + g*n, s.ends[0].n + n}, center{s.ends[1].sum + b*n, s.ends[1].n + n}
	s.settle()
}

// center is a kernel's boots in decided steps: their sum and number.
type center struct{ sum, n float64 }

// allowance is τ², the variance of a kernel's own offset allowed for,
// as the series' offset test estimates it (offsetP): the scatter of
// the judged kernels' centers (good's and bad's over the decided steps,
// each image placed) about their side's mean, less the boots' share,
// never below (Offset·σ)²; the floor alone before an image is placed,
// and 0 where Offset is 0 (one image: no offsets of its own).
func (s *Search) allowance(sd float64) float64 {
	tau2 := s.opts.Offset * s.opts.Offset * sd * sd
	if tau2 == 0 || len(s.placed[0])+len(s.placed[1]) == 0 {
		return tau2
	}
	var k, ss, inv float64
	for side, imgs := range s.placed {
		var cs []float64
		for _, c := range append(imgs, s.ends[side]) {
			cs, inv = append(cs, c.sum/c.n), inv+1/c.n
		}
		_, v := meanVar(cs)
		k, ss = k+float64(len(cs)), ss+v*float64(len(cs)-1)
	}
	return max(tau2, ss/(k-2)-sd*sd*inv/k)
}

// Result is the search so far: final once Done.
func (s *Search) Result() SearchResult {
	r := s.res
	r.Steps = append([]Step(nil), r.Steps...)
	r.Skipped = slices.Clone(r.Skipped)
	return r
}

// Looks are a step's looks, in rounds, and each one's one-sided level.
func (s *Search) Looks() ([]int, []float64) { return slices.Clone(s.looks), slices.Clone(s.levels) }
