//go:build linux

package abseries

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/aclements/go-moremath/stats"

	"github.com/kbench/kbench/internal/abmath"
	"github.com/kbench/kbench/internal/abstat"
)

// Options are the change-point test's knobs.
type Options struct {
	// Alpha is the family's level for a row's q (Benjamini-Hochberg);
	// Power the chance the mde of a row is planned to be seen with.
	Alpha, Power float64
	// Permutations is the most permutations one test draws; it stops
	// once Exceed permuted statistics reached the observed one (Besag
	// and Clifford's sequential p), so rows without a change are cheap.
	Permutations, Exceed int
	Seed                 uint64 // the same rows give the same result
	// Threshold is the size gate (kbcompare's -threshold): a smaller
	// relative change is reported as below it.
	Threshold float64
	// Offset is the least spread of a kernel's own offset allowed for
	// (separate builds' layouts), as a multiple of the boot spread.
	Offset float64
}

// DefaultOptions are kbcompare's level and power, with enough
// permutations to resolve p at 0.05 over a hundred rows (99999 expect
// 50 exceedances at 5e-4; at 9999 the test ran at about half its level).
var DefaultOptions = Options{Alpha: abstat.DefaultOptions.Alpha, Power: abmath.TargetPower,
	Permutations: 99999, Exceed: 20, Seed: 38, Threshold: abstat.DefaultOptions.Threshold, Offset: 0.5}

// DefaultBoots is a series' boots per kernel: what BootsFor gives a 10%
// step mid-series of 8 kernels, a suite's rows, boot medians spreading
// ±3% (results/2026-12-05-bisect-sims-2.md).
const DefaultBoots = 5

// MinBoots is the fewest boots a kernel needs for a spread within it.
const MinBoots = 2

// Change is one change point of a row.
type Change struct {
	After int // the change is between kernels After and After+1
	// Ratio is the center of the segment after over the one before (a
	// ratio of geometric means with logs), Lo and Hi Welch's interval.
	Ratio, Lo, Hi float64
	// P is the split's p (the larger of the permutation's and the
	// offset test's), Q its q over the family.
	P, Q  float64
	Small bool // below Options.Threshold
}

// RowResult is one row's test.
type RowResult struct {
	Scale   abmath.Scale
	Centers []float64 // each kernel's mean on Scale, mapped back
	// P is the permutation p of any change at all, Q its q over the
	// family; NaN where the row was not tested.
	P, Q    float64
	Changes []Change // by After
	// MDE is the relative step mid-series (after kernel K/2-1) the rule
	// finds with Options.Power at Alpha over the rows, MDEEnd that of a
	// step before the last kernel, the hardest place.
	MDE, MDEEnd float64
	Sigma       float64 // pooled spread of boot medians within kernels, on Scale
	// MinP and MinPEnd are the smallest p the permutation can give a
	// step in the middle and before the last kernel.
	MinP, MinPEnd float64
	// Blip, for an unchanged row whose kernels differ by the permutation
	// alone, is the kernel farthest from the others' level (-1: none),
	// BlipRatio its center over theirs: an offset of its own, not a step.
	Blip      int
	BlipRatio float64
	// Drift, where a line over the kernels fits better than the change
	// points, is the ratio of a kernel's center to the one before (0: none).
	Drift float64
	// Untested says why the row was not tested, Kernel which kernel made
	// it so (-1: none, or the row as a whole).
	Untested string
	Kernel   int
}

// Detect tests each row for change points: rows[r][k] are row r's boot
// medians of kernel k, in series order. The rows are one family
// (Benjamini-Hochberg, an untested row at p = 1); binary segmentation
// recurses into a changed row's segments at the level that admitted it.
func Detect(rows [][][]float64, o Options) []RowResult {
	out := make([]RowResult, len(rows))
	ps := make([]float64, len(rows))
	segs := make([]*series, len(rows))
	perms := make([]float64, len(rows))
	for r, meds := range rows {
		s, kernel, why := newSeries(meds)
		res := &out[r]
		res.Kernel, res.Blip = kernel, -1
		res.P, res.Q, res.MDE, res.MDEEnd, res.Sigma = math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN()
		if why != "" {
			res.Untested, ps[r] = why, 1 // p 1 in the family
			continue
		}
		segs[r] = s
		res.Scale, res.Centers, res.Sigma = s.sc, s.centers(), s.sigma()
		res.P, perms[r], _ = s.test(0, len(meds), rand.New(rand.NewPCG(o.Seed, uint64(r))), o)
		ps[r] = res.P
		n, k := len(s.x), s.kernels()
		c, _ := meanVar(s.x)
		mde := func(after int) float64 { // MDEShift's step, relative
			return s.sc.Change(MDEShift(res.Sigma, float64(n)/float64(k), k, after, o.Alpha/float64(len(rows)), o.Power, o.Offset), c)
		}
		res.MDE, res.MDEEnd = mde(k/2-1), mde(k-2)
		res.MinP, res.MinPEnd = MinP(n, n*(k/2)/k), MinP(n, n*(k-1)/k)
	}
	qs := abmath.BHQ(ps)
	admitted := 0
	for r := range rows {
		if segs[r] != nil && qs[r] <= o.Alpha {
			admitted++
		}
	}
	// The Benjamini-Hochberg threshold that admitted the rows.
	level := o.Alpha * float64(admitted) / float64(len(rows))
	for r := range rows {
		if segs[r] == nil {
			continue
		}
		out[r].Q = qs[r]
		if qs[r] > o.Alpha {
			if perms[r] <= o.Alpha/float64(len(rows)) {
				out[r].Blip, out[r].BlipRatio = segs[r].blip()
			}
			continue
		}
		rng := rand.New(rand.NewPCG(o.Seed, uint64(len(rows)+r)))
		scaleQ := func(p float64) float64 {
			return min(1, max(qs[r], p*float64(len(rows))/float64(admitted)))
		}
		var cs []Change // After and P; the first the row's own split
		var split func(a, b int, p float64, j int)
		split = func(a, b int, p float64, j int) {
			cs = append(cs, Change{After: j, P: p, Q: scaleQ(p)})
			for _, seg := range [][2]int{{a, j + 1}, {j + 1, b}} {
				if seg[1]-seg[0] < 2 {
					continue
				}
				if p, _, j := segs[r].test(seg[0], seg[1], rng, o); p <= level {
					split(seg[0], seg[1], p, j)
				}
			}
		}
		_, j := segs[r].best(0, len(rows[r]))
		split(0, len(rows[r]), out[r].P, j)
		cs[0].Q = qs[r]
		slices.SortFunc(cs, func(a, b Change) int { return a.After - b.After })
		for k, c := range cs {
			from, to := -1, len(rows[r])-1
			if k > 0 {
				from = cs[k-1].After
			}
			if k+1 < len(cs) {
				to = cs[k+1].After
			}
			ch := segs[r].change(from+1, c.After+1, to+1)
			ch.P, ch.Q, ch.Small = c.P, c.Q, math.Abs(ch.Ratio-1) < o.Threshold
			out[r].Changes = append(out[r].Changes, ch)
		}
		out[r].Drift = segs[r].drift([]int{-1, j, len(rows[r]) - 1})
	}
	return out
}

// series is one row's boot medians on its scale, kernel after kernel.
type series struct {
	sc    abmath.Scale
	x     []float64 // every boot median on sc, kernel after kernel
	start []int     // kernel k's boots are x[start[k]:start[k+1]]
}

// newSeries is a row's series, or the kernel at fault (-1: none) and why not.
func newSeries(meds [][]float64) (*series, int, string) {
	if len(meds) < 2 {
		return nil, -1, fmt.Sprintf("%d kernels: want at least 2", len(meds))
	}
	for k, m := range meds {
		if len(m) < MinBoots {
			return nil, k, fmt.Sprintf("%d boots: want at least %d", len(m), MinBoots)
		}
		if i := slices.IndexFunc(m, notFinite); i >= 0 {
			return nil, k, fmt.Sprintf("a boot median of %v", m[i])
		}
	}
	s := &series{sc: abmath.ScaleOf(meds...)}
	for _, m := range meds {
		s.start = append(s.start, len(s.x))
		s.x = append(s.x, s.sc.ToAll(m)...)
	}
	s.start = append(s.start, len(s.x))
	return s, -1, ""
}

func (s *series) kernels() int { return len(s.start) - 1 }

func (s *series) kernel(k int) []float64 { return s.x[s.start[k]:s.start[k+1]] }

func (s *series) centers() []float64 {
	var c []float64
	for k := range s.kernels() {
		m, _ := meanVar(s.kernel(k))
		c = append(c, s.sc.From(m))
	}
	return c
}

// sigma is the pooled spread of boot medians within kernels.
func (s *series) sigma() float64 {
	var ss float64
	for k := range s.kernels() {
		_, v := meanVar(s.kernel(k))
		ss += v * float64(len(s.kernel(k))-1)
	}
	return math.Sqrt(ss / float64(len(s.x)-s.kernels()))
}

// maxT is the largest pooled-variance |t| of x before against after a
// boundary of cut (offsets into x), and the boundary's index in cut.
func maxT(x []float64, cut []int) (float64, int) {
	n := len(x)
	var sum, sq float64
	c, _ := meanVar(x) // center first: sums of squares of small numbers
	for _, v := range x {
		sum += v - c
		sq += (v - c) * (v - c)
	}
	best, at := -1.0, 0
	var s1, q1 float64
	i := 0
	for j, b := range cut {
		for ; i < b; i++ {
			s1 += x[i] - c
			q1 += (x[i] - c) * (x[i] - c)
		}
		n1, n2 := float64(b), float64(n-b)
		s2, q2 := sum-s1, sq-q1
		m1, m2 := s1/n1, s2/n2
		ss := max(0, q1-s1*m1) + max(0, q2-s2*m2)
		d := m2 - m1
		var t float64
		switch sp := ss / float64(n-2); {
		case sp > 0:
			t = math.Abs(d) / math.Sqrt(sp*(1/n1+1/n2))
		case math.Abs(d) > 1e-12:
			t = math.Inf(1)
		}
		if t > best {
			best, at = t, j
		}
	}
	return best, at
}

// cuts are the boundaries of kernels a..b-1 as offsets into their boots.
func (s *series) cuts(a, b int) []int {
	var c []int
	for k := a + 1; k < b; k++ {
		c = append(c, s.start[k]-s.start[a])
	}
	return c
}

// best is the largest statistic over the splits of kernels a..b-1 and
// the last kernel before its split.
func (s *series) best(a, b int) (float64, int) {
	t, j := maxT(s.x[s.start[a]:s.start[b]], s.cuts(a, b))
	return t, a + j
}

// test is the p of kernels a..b-1 (the larger of the permutation's and
// the offset test's), the permutation's p, and the best split. The
// permutation exchanges boots across the kernels: p = (exceedances +
// 1) / (permutations + 1), or Exceed/permutations once Exceed came.
func (s *series) test(a, b int, rng *rand.Rand, o Options) (p, perm float64, j int) {
	perm, j = s.permute(a, b, rng, o)
	return max(perm, s.offsetP(a, j, b, o.Offset)), perm, j
}

func (s *series) permute(a, b int, rng *rand.Rand, o Options) (float64, int) {
	obs, j := s.best(a, b)
	x := slices.Clone(s.x[s.start[a]:s.start[b]])
	cut := s.cuts(a, b)
	tol := obs * (1 - 1e-9)
	exceed := 0
	for i := 1; i <= o.Permutations; i++ {
		rng.Shuffle(len(x), func(i, j int) { x[i], x[j] = x[j], x[i] })
		if t, _ := maxT(x, cut); t >= tol {
			exceed++
			if exceed == o.Exceed {
				return float64(exceed) / float64(i), j
			}
		}
	}
	return float64(exceed+1) / float64(o.Permutations+1), j
}

// change is the change between kernels a..m-1 and m..b-1.
func (s *series) change(a, m, b int) Change {
	old, new := s.x[s.start[a]:s.start[m]], s.x[s.start[m]:s.start[b]]
	mo, vo := meanVar(old)
	mn, vn := meanVar(new)
	d := mn - mo
	se := math.Sqrt(vo/float64(len(old)) + vn/float64(len(new)))
	w := 0.0
	if se > 0 {
		_, df, _ := abmath.Welch(old, new)
		w = abmath.TQuantile(1-(1-abmath.Confidence)/2, df) * se
	}
	return Change{After: m - 1, Ratio: 1 + s.sc.Change(d, mo), Lo: 1 + s.sc.Change(d-w, mo), Hi: 1 + s.sc.Change(d+w, mo)}
}

// offsetP is the p of the split after kernel j of kernels a..b-1 with
// each kernel's own offset allowed for: the means' difference over its
// standard error from the spread within kernels σ and the offsets' τ
// (the centers' scatter within each side, at least rho·σ), two-sided
// t, Bonferroni over the splits.
func (s *series) offsetP(a, j, b int, rho float64) float64 {
	n1, n2 := float64(s.start[j+1]-s.start[a]), float64(s.start[b]-s.start[j+1])
	k1, k2 := float64(j+1-a), float64(b-j-1)
	m1, _ := meanVar(s.x[s.start[a]:s.start[j+1]])
	m2, _ := meanVar(s.x[s.start[j+1]:s.start[b]])
	sd := s.sigma()
	tau2 := rho * rho * sd * sd
	if df := k1 + k2 - 2; df > 0 {
		var ss float64
		for k := a; k < b; k++ {
			c, _ := meanVar(s.kernel(k))
			if k <= j {
				c -= m1
			} else {
				c -= m2
			}
			ss += c * c
		}
		tau2 = max(tau2, ss/df-sd*sd*(k1+k2)/(n1+n2))
	}
	t := math.Abs(m2-m1) / math.Sqrt(sd*sd*(1/n1+1/n2)+tau2*(1/k1+1/k2))
	if math.IsNaN(t) {
		return 1
	}
	df := float64(len(s.x) - s.kernels())
	return min(1, float64(b-a-1)*2*(1-(stats.TDist{V: df}).CDF(t)))
}

// blip is the kernel farthest from the others' mean, and its ratio to it.
func (s *series) blip() (int, float64) {
	at, far, ratio := -1, -1.0, 1.0
	c, _ := meanVar(s.x)
	for k := range s.kernels() {
		m, _ := meanVar(s.kernel(k))
		n := float64(len(s.kernel(k)))
		rest := (c*float64(len(s.x)) - m*n) / (float64(len(s.x)) - n)
		if d := math.Abs(m - rest); d > far {
			at, far, ratio = k, d, 1+s.sc.Change(m-rest, rest)
		}
	}
	return at, ratio
}

// drift is the ratio from one kernel to the next along the line fitted
// over the kernel index, where it leaves less spread than the row's
// first change (bounds: -1, the kernel before it, the last); else 0.
func (s *series) drift(bounds []int) float64 {
	var steps float64
	for i := 1; i < len(bounds); i++ {
		seg := s.x[s.start[bounds[i-1]+1]:s.start[bounds[i]+1]]
		m, _ := meanVar(seg)
		for _, v := range seg {
			steps += (v - m) * (v - m)
		}
	}
	var xs []float64
	for k := range s.kernels() {
		for range s.kernel(k) {
			xs = append(xs, float64(k))
		}
	}
	mx, vx := meanVar(xs)
	my, _ := meanVar(s.x)
	var sxy float64
	for i, v := range s.x {
		sxy += (xs[i] - mx) * (v - my)
	}
	n := float64(len(s.x))
	slope := sxy / (vx * (n - 1))
	var line float64
	for i, v := range s.x {
		r := v - my - slope*(xs[i]-mx)
		line += r * r
	}
	if s.kernels() < 3 || line/(n-2) >= steps/(n-float64(len(bounds)-1)) {
		return 0
	}
	return 1 + s.sc.Change(slope, my)
}

// MinP is the smallest p a permutation of n boots can give a split
// with before of them before it: 2/C(n, before).
func MinP(n, before int) float64 {
	lg := func(x int) float64 { v, _ := math.Lgamma(float64(x + 1)); return v }
	return min(1, 2*math.Exp(lg(before)+lg(n-before)-lg(n)))
}

// MDEShift is the step on the scale after kernel after of kernels with
// boots boot medians each, of spread sigma, that the rule finds with
// power at the two-sided level: (c + t(power)) · √(σ²(1/n1 + 1/n2) +
// (rho·σ)²(1/k1 + 1/k2)), c Bonferroni's over the kernels-1 splits (the
// permutation's is below it: the mde errs large).
func MDEShift(sigma, boots float64, kernels, after int, level, power, rho float64) float64 {
	n := boots * float64(kernels)
	n1 := boots * float64(after+1)
	n2 := n - n1
	k1, k2 := float64(after+1), float64(kernels-after-1)
	df := n - float64(kernels)
	c := abmath.TQuantile(1-level/(2*float64(kernels-1)), df)
	return (c + abmath.TQuantile(power, df)) * sigma * math.Sqrt(1/n1+1/n2+rho*rho*(1/k1+1/k2))
}

// meanVar is go-moremath's mean and sample variance of v.
func meanVar(v []float64) (mean, variance float64) {
	return stats.Mean(v), stats.Variance(v)
}
