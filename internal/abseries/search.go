//go:build linux

package abseries

import (
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/kbench/kbench/internal/abmath"
)

// SearchOptions are a bisection's knobs.
type SearchOptions struct {
	// Wrong bounds the chance of naming a wrong first bad image (or
	// "not one step" where there is one step).
	Wrong float64
	// Power is the chance an image halfway is found unlike both good
	// and bad by a step's last look, for a step of Step (relative) or
	// the confirmed difference if smaller.
	Power, Step float64
	// Offset is as the series' Options.Offset (0: one image).
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
	// InAllowance: the image is, with confidence, within its own
	// offset's allowance of both good and bad.
	InAllowance Decision = "undecided: within the allowance for its own offset of both good and bad"
)

// Step is one step of a bisection: an image booted beside good and bad
// until decided, the three kernels' centers in the row's units, and
// the image's Position (0 at good's center, 1 at bad's).
type Step struct {
	Image                            int
	Rounds                           int
	Decision                         Decision
	Good, ImageCenter, Bad, Position float64
}

// SearchResult is where a bisection ended.
type SearchResult struct {
	// FirstBad is the first image like the bad kernel (images: the bad
	// kernel itself), -1 where the search named none.
	FirstBad int
	// Lo and Hi bracket it in (Lo, Hi] (-1 good, images bad).
	Lo, Hi int
	Steps  []Step
	// Skipped are the images that do not build, in the order skipped.
	Skipped []int
	Boots   int
	Done    bool
}

// Search is a bisection over the images between a good and a bad kernel,
// for one row: a runner asks Next which kernel to boot, and gives the
// row's boot median to Observe, until Next says done. Each step boots
// rounds of good, image and bad and at each look (plan) t-tests
// contrasts of the three means (judge); docs/comparing.md, "Bisection
// over images", argues the rule and states its promise.
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

// NewSearch is a bisection over images (0 or more) images between good
// and bad, the confirmation's boot medians (they set the scale and
// direction), with o's chances in (0, 1) and Step and Offset >= 0.
func NewSearch(good, bad []float64, images int, o SearchOptions) (*Search, error) {
	switch {
	case len(good) == 0 || len(bad) == 0:
		return nil, fmt.Errorf("%d good and %d bad boots: want at least one each", len(good), len(bad))
	case !finite(good) || !finite(bad):
		return nil, fmt.Errorf("good %v, bad %v: want finite boot medians", good, bad)
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
// and variance v on the scale: n rounds, enough for an image halfway
// to differ from good and from bad at the last look's two-sided level
// with power 1-(1-Power)/2 each; looks n, n/2, ... down to 3, each
// spending Wrong/steps in proportion to its rounds.
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

// maxRounds bounds a step's rounds, far above any run's, to keep int's range.
const maxRounds = 1e9

// finite reports whether every x is neither NaN nor infinite.
func finite(xs []float64) bool {
	return !slices.ContainsFunc(xs, func(x float64) bool { return math.IsNaN(x) || math.IsInf(x, 0) })
}

// Steps is the most steps a bisection over images images takes: ⌈log2(images+1)⌉.
func Steps(images int) int { return max(bits.Len(uint(images)), 1) }

// settle starts the next step at the unskipped image nearest the
// bracket's middle (the later of two), or ends the search.
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

// Skip marks the step's image, before its first boot, as one that does
// not build, as git bisect skip does; the step's good and bad boots stay.
func (s *Search) Skip(image int) error {
	if s.res.Done || image != s.cur.Image || len(s.x[1]) > 0 {
		return fmt.Errorf("image %d: want the step's image before its first boot", image)
	}
	s.res.Skipped = append(s.res.Skipped, image)
	s.settle()
	return nil
}

// Between are the skipped images in (Lo, Hi): the first bad may be one.
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

// Next is the kernel to boot next: an image, -1 good, images bad.
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

// Observe records a boot of image (Next's) with the row's boot median.
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

// judge tests the step's contrasts at look, σ pooled over the search:
// unlike both good and bad (two-sided), not one step; else past the
// midpoint and unlike good, bad (or the mirror, good); within the
// allowance τ of both, undecided (a difference's variance 2σ²/n + 2τ²).
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

// allowance is τ², as the series' offsetP estimates it: the scatter of
// the placed kernels' centers about their side's mean, less the boots'
// share, at least (Offset·σ)² (the floor alone before an image is placed).
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

// Result is the search so far (final once Done), for reading.
func (s *Search) Result() SearchResult { return s.res }

// Looks are a step's looks, in rounds, and each one's one-sided level.
func (s *Search) Looks() ([]int, []float64) { return slices.Clone(s.looks), slices.Clone(s.levels) }
