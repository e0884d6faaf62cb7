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
	// Alpha is the family's level: a change is reported where its q
	// (Benjamini-Hochberg over the rows) is at most Alpha.
	Alpha float64
	// Power is the chance the mde of a row without a change is planned
	// to be seen with (0.8).
	Power float64
	// Permutations is the most permutations one test draws; the test
	// stops early once Exceed permuted statistics reached the observed
	// one (Besag and Clifford's sequential p), which is what keeps rows
	// without a change cheap.
	Permutations, Exceed int
	// Seed seeds the permutations: the same rows give the same result.
	Seed uint64
}

// DefaultOptions are kbcompare's level and power, with enough
// permutations to resolve p at the family's level of a hundred rows:
// at 0.05/100 = 5e-4, 99999 permutations expect 50 exceedances, so the
// Monte Carlo p's own noise costs little power (at 9999, 5 expected
// exceedances, the test ran at about half its level).
var DefaultOptions = Options{Alpha: abstat.DefaultOptions.Alpha, Power: abmath.TargetPower,
	Permutations: 99999, Exceed: 20, Seed: 38}

// DesignPower is the power a series' boots per kernel are planned with
// (BootsFor): a step found with 90% power is found at its place, between
// the right two kernels, in at least 80% of series; at 80% power, in
// about 75% (the largest t lands a kernel off in the rest).
const DesignPower = 0.9

// DefaultBoots is the boots per kernel of a series where the user names
// none: what BootsFor gives a 10% step in the middle of a series of 8
// kernels, in a suite's family of rows, at DesignPower, for boot medians
// spreading ±5% (results/2026-12-04-series-simulations.md lists the
// suite's rows and their boots).
const DefaultBoots = 5

// MinBoots is the fewest boots a kernel needs for its row to be tested:
// two, for a spread within the kernel.
const MinBoots = 2

// Change is one change point of a row.
type Change struct {
	// After is the index of the last kernel before the change: the
	// change is between kernels After and After+1.
	After int
	// Ratio is the center of the kernels after the change (up to the
	// next change) over that of the kernels before it (back to the
	// previous one), on the row's scale mapped back: a ratio of
	// geometric means with logs. Lo and Hi bound it at
	// abmath.Confidence (Welch's interval of the two segments' boot
	// medians).
	Ratio, Lo, Hi float64
	// P is the permutation p of the split's segment, Q its q over the
	// family.
	P, Q float64
}

// RowResult is one row's test.
type RowResult struct {
	Scale abmath.Scale
	// Centers are each kernel's center (its boot medians' mean on Scale,
	// mapped back), for pictures.
	Centers []float64
	// P is the permutation p of the whole series (any change at all),
	// Q its q over the family; NaN where the row was not tested.
	P, Q float64
	// Changes are the changes found, by After.
	Changes []Change
	// MDE is, for a row without a change, the smallest step in the
	// middle of the series (between kernels K/2-1 and K/2) that the rule
	// reports as a change of the row with Options.Power at the level a row changed alone must
	// reach (Alpha over the rows), as a relative change; MDEEnd that of
	// a step before the last kernel (or after the first: the same boots
	// a side), the hardest place. Both are computed for rows with
	// changes too, from the spread within the kernels.
	MDE, MDEEnd float64
	// Sigma is the pooled spread of boot medians within the kernels, on
	// Scale (a relative spread with logs).
	Sigma float64
	// Untested says why the row was not tested ("" where it was), and
	// Kernel which kernel made it so (-1: none, or the row as a whole).
	Untested string
	Kernel   int
}

// Detect tests each row of rows for change points: rows[r][k] are row
// r's boot medians of kernel k, kernels in series order. Rows are one
// family: the rows' p-values are corrected with Benjamini and Hochberg's
// q as kbcompare's family is (abmath.BHQ), a row untested counting as p
// = 1. Binary segmentation then recurses into the segments of each row
// found changed, testing each at the level that admitted the row.
func Detect(rows [][][]float64, o Options) []RowResult {
	out := make([]RowResult, len(rows))
	ps := make([]float64, len(rows))
	segs := make([]*series, len(rows))
	for r, meds := range rows {
		s, kernel, why := newSeries(meds)
		res := &out[r]
		res.Kernel = kernel
		res.P, res.Q, res.MDE, res.MDEEnd, res.Sigma = math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN()
		ps[r] = 1
		if why != "" {
			res.Untested = why
			continue
		}
		segs[r] = s
		res.Scale, res.Centers, res.Sigma = s.sc, s.centers(), s.sigma()
		rng := rand.New(rand.NewPCG(o.Seed, uint64(r)))
		res.P, _ = s.test(0, len(meds), rng, o)
		ps[r] = res.P
		res.MDE, res.MDEEnd = s.mdes(o.Alpha/float64(len(rows)), o.Power)
	}
	qs := abmath.BHQ(ps)
	admitted := 0
	for r := range rows {
		if segs[r] != nil && qs[r] <= o.Alpha {
			admitted++
		}
	}
	// The Benjamini-Hochberg threshold that admitted the rows: every
	// admitted row's p is at most it, and the segments are tested at it.
	level := o.Alpha * float64(admitted) / float64(len(rows))
	for r := range rows {
		if segs[r] == nil {
			continue
		}
		out[r].Q = qs[r]
		if qs[r] > o.Alpha {
			continue
		}
		rng := rand.New(rand.NewPCG(o.Seed, uint64(len(rows)+r)))
		scaleQ := func(p float64) float64 {
			return min(1, max(qs[r], p*float64(len(rows))/float64(admitted)))
		}
		var afters []int
		var cps []float64
		var split func(a, b int, p float64, j int)
		split = func(a, b int, p float64, j int) {
			afters, cps = append(afters, j), append(cps, p)
			for _, seg := range [][2]int{{a, j + 1}, {j + 1, b}} {
				if seg[1]-seg[0] < 2 {
					continue
				}
				if p, j := segs[r].test(seg[0], seg[1], rng, o); p <= level {
					split(seg[0], seg[1], p, j)
				}
			}
		}
		_, j := segs[r].best(0, len(rows[r]))
		split(0, len(rows[r]), out[r].P, j)
		order := make([]int, len(afters))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int { return afters[a] - afters[b] })
		bounds := []int{-1}
		for _, i := range order {
			bounds = append(bounds, afters[i])
		}
		bounds = append(bounds, len(rows[r])-1)
		for k, i := range order {
			c := segs[r].change(bounds[k]+1, afters[i]+1, bounds[k+2]+1)
			c.P, c.Q = cps[i], scaleQ(cps[i])
			if i == 0 {
				c.Q = qs[r]
			}
			out[r].Changes = append(out[r].Changes, c)
		}
	}
	return out
}

// series is one row's boot medians on its scale, kernel after kernel.
type series struct {
	sc    abmath.Scale
	x     []float64 // every boot median on sc, kernel after kernel
	start []int     // kernel k's boots are x[start[k]:start[k+1]]
}

// newSeries is a row's series, or the kernel at fault (-1: none) and
// why there is none.
func newSeries(meds [][]float64) (*series, int, string) {
	if len(meds) < 2 {
		return nil, -1, fmt.Sprintf("%d kernels: want at least 2", len(meds))
	}
	for k, m := range meds {
		if len(m) < MinBoots {
			return nil, k, fmt.Sprintf("%d boots: want at least %d", len(m), MinBoots)
		}
		for _, v := range m {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, k, fmt.Sprintf("a boot median of %v", v)
			}
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

// maxT is the largest |t| of the two-sample (pooled variance) t of the
// values x before a kernel boundary against those after, over the
// boundaries cut (offsets into x, strictly inside), and the boundary
// that gives it.
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

// cuts are the kernel boundaries of kernels a..b-1 as offsets into
// their boots.
func (s *series) cuts(a, b int) []int {
	var c []int
	for k := a + 1; k < b; k++ {
		c = append(c, s.start[k]-s.start[a])
	}
	return c
}

// best is the largest statistic over the splits of kernels a..b-1 and
// the last kernel before the split that gives it.
func (s *series) best(a, b int) (float64, int) {
	t, j := maxT(s.x[s.start[a]:s.start[b]], s.cuts(a, b))
	return t, a + j
}

// test is the permutation p of the segment of kernels a..b-1, and the
// split of its largest statistic: the boots are exchanged across the
// segment's kernels (no change: every boot median alike), the statistic
// recomputed on each permutation, and p = (exceedances + 1) /
// (permutations + 1), or Besag and Clifford's Exceed/permutations where
// Exceed exceedances came first.
func (s *series) test(a, b int, rng *rand.Rand, o Options) (float64, int) {
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

// mdes are the row's mde for a step in the middle and at the end, at
// the two-sided level and power (MDEAt).
func (s *series) mdes(level, power float64) (mid, end float64) {
	k := s.kernels()
	per := float64(len(s.x)) / float64(k)
	c, _ := meanVar(s.x)
	sd := s.sigma()
	return s.sc.Change(MDEShift(sd, per, k, k/2-1, level, power), c), s.sc.Change(MDEShift(sd, per, k, k-2, level, power), c)
}

// MDEShift is the step on the scale after kernel after (from 0) of a
// series of kernels with boots boot medians each, of spread sigma on
// the scale, that the rule finds with power at the two-sided level: the
// shift whose t at the step is the critical value of the largest of the
// kernels-1 statistics plus the power's quantile, (c + t(power)) · σ ·
// √(1/n1 + 1/n2), c Bonferroni's t(1 - level/(2(kernels-1))) on n-2
// degrees of freedom. Bonferroni over the splits bounds the permutation
// test's critical value from above, so the mde errs on the large side
// (the simulations measure by how much).
func MDEShift(sigma, boots float64, kernels, after int, level, power float64) float64 {
	n := boots * float64(kernels)
	n1 := boots * float64(after+1)
	n2 := n - n1
	df := n - 2
	c := abmath.TQuantile(1-level/(2*float64(kernels-1)), df)
	return (c + abmath.TQuantile(power, df)) * sigma * math.Sqrt(1/n1+1/n2)
}

// BootsFor is the boots per kernel a series of kernels needs for a step
// of target (a relative change, on logs) in its middle to be found with
// power at the level a row of a family of rows reaches alone
// (alpha/rows), for boot medians of spread sigma (on logs): the least n
// from MinBoots up whose MDEShift is at most log(1+target); 0 where
// none up to max is.
func BootsFor(target, sigma float64, kernels, rows int, alpha, power float64, max int) int {
	shift := math.Log1p(target)
	for n := MinBoots; n <= max; n++ {
		if MDEShift(sigma, float64(n), kernels, kernels/2-1, alpha/float64(rows), power) <= shift {
			return n
		}
	}
	return 0
}

// meanVar is the mean and the sample variance of v (0 for one value),
// go-moremath's.
func meanVar(v []float64) (mean, variance float64) {
	return stats.Mean(v), stats.Variance(v)
}
