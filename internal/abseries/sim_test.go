//go:build linux

package abseries

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kbench/kbench/internal/abmath"
	"github.com/kbench/kbench/internal/abstat/sim"
)

// The simulations draw series from the real run of every package
// (sim.SuiteFile): a boot's median of a row is the median of
// simCount of the row's real ns/op samples drawn with
// replacement, moved by the boot's layout (sim.Suite.DrawRow), at the
// layout spreads of real comparisons (0.35 and 1.2 times each row's
// within-boot spread, sim.Comparison). By default they draw a few hundred
// series (go test's default keeps them to seconds: CI runs them);
// KBENCH_SIM_FULL=1 draws the sizes
// results/2026-12-04-series-simulations.md reports.

func full() bool { return os.Getenv("KBENCH_SIM_FULL") != "" }

// simCount is the -count of every simulated boot: the fixed design's
// (abplan.FixedCount, a later layer than this package's).
const simCount = 10

// layouts are the layout spreads simulated, as multiples of a row's
// within-boot spread.
var layouts = []float64{0.35, 1.2}

// bootMedian draws one boot median of row i of the suite: side 1 is
// changed by the design's Change. With smooth, each sample is jittered
// by exp(h × N(0,1)), h = 0.9 × Within × n^(-1/5) (Silverman's rule of
// thumb, with the row's robust spread of logs for its sd): the smoothed
// bootstrap, whose boot medians are not bounded by the fixture's ten
// values (results/2026-12-04-stein-tails.md).
func bootMedian(s *sim.Suite, rng *rand.Rand, i, side int, d sim.Comparison, smooth ...bool) float64 {
	row := &s.Rows[i]
	j := slices.Index(row.Units, "ns/op")
	h := 0.0
	if len(smooth) > 0 && smooth[0] {
		h = 0.9 * row.Within * math.Pow(float64(len(row.Results)), -0.2)
	}
	var v []float64
	for _, r := range s.DrawRow(rng, i, side, d) {
		x := r.Values[j]
		if h > 0 {
			x *= math.Exp(h * rng.NormFloat64())
		}
		v = append(v, x)
	}
	slices.Sort(v)
	return (v[len(v)/2] + v[(len(v)-1)/2]) / 2
}

// drawSeries draws every row's boot medians over kernels, boots per
// kernel, the kernels from changeAt on changed (side 1), each kernel of
// row i moved by its own offset, exp(offsets[i] × N(0,1)) (offsets nil:
// none).
func drawSeries(s *sim.Suite, rng *rand.Rand, kernels, boots, changeAt int, d sim.Comparison, offsets []float64, smooth ...bool) [][][]float64 {
	rows := make([][][]float64, len(s.Rows))
	for i := range s.Rows {
		rows[i] = make([][]float64, kernels)
		for k := range kernels {
			side := 0
			if k >= changeAt {
				side = 1
			}
			off := 1.0
			if offsets != nil {
				off = math.Exp(offsets[i] * rng.NormFloat64())
			}
			for range boots {
				rows[i][k] = append(rows[i][k], off*bootMedian(s, rng, i, side, d, smooth...))
			}
		}
	}
	return rows
}

// medianSD is the spread of row i's boot medians on logs under d:
// drawn, 4000 boots (±1.1%).
func medianSD(s *sim.Suite, i int, d sim.Comparison, smooth ...bool) float64 {
	rng := rand.New(rand.NewPCG(38, 99))
	var v []float64
	for range 4000 {
		v = append(v, math.Log(bootMedian(s, rng, i, 0, d, smooth...)))
	}
	_, vr := meanVar(v)
	return math.Sqrt(vr)
}

// simDraws is how many series a simulation draws: full, default, -short.
func simDraws(fullN, n, short int) int {
	switch {
	case full():
		return fullN
	case testing.Short():
		return short
	}
	return n
}

// needs are, per row of the suite, the spread of its boot medians under
// d and the boots per kernel BootsFor gives a 10% step in a series of 8.
func needs(s *sim.Suite, d sim.Comparison, smooth ...bool) (sds []float64, boots []int) {
	for i := range s.Rows {
		sd := medianSD(s, i, d, smooth...)
		sds = append(sds, sd)
		boots = append(boots, BootsFor(0.10, sd, 8, len(s.Rows), DefaultOptions.Alpha, DesignPower, DefaultOptions.Offset, 100))
	}
	return sds, boots
}

// TestSimNoChange: a series of 8 kernels, every row of the suite, no
// change: a change point on some row in at most 5% of draws (two
// binomial standard errors of the draws' share at 5% allowed), at
// DefaultBoots per kernel and at 3 (DefaultBoots only, 40 draws, without
// KBENCH_SIM_FULL).
func TestSimNoChange(t *testing.T) {
	s := sim.LoadSuite(t)
	draws := simDraws(200, 40, 20)
	for li, mult := range layouts {
		d := sim.Comparison{Count: simCount, Between: mult}
		sds, _ := needs(s, d)
		for bi, c := range []struct {
			boots  int
			offset float64
		}{{DefaultBoots, 0}, {DefaultBoots, 0.2}, {DefaultBoots, 0.5}, {3, 0}, {3, 0.5}} {
			if (bi > 2 || li == 0) && !full() {
				continue // DefaultBoots at the noisier layout only: seconds a case
			}
			var offs []float64
			for _, sd := range sds {
				offs = append(offs, c.offset*sd)
			}
			var any, changes, blips int
			var mu sync.Mutex
			sim.Parallel(draws, func(i int) {
				rng := rand.New(rand.NewPCG(40, uint64(1000000*(10*li+bi)+i)))
				res := Detect(drawSeries(s, rng, 8, c.boots, 8, d, offs), DefaultOptions)
				n, b := 0, 0
				for _, r := range res {
					n += len(r.Changes)
					if r.Blip >= 0 {
						b++
					}
				}
				mu.Lock()
				defer mu.Unlock()
				changes += n
				blips += b
				if n > 0 {
					any++
				}
			})
			share := float64(any) / float64(draws)
			t.Logf("no change, layout %.2f×within, %d boots a kernel, offsets %.1f × boot spread, %d rows: a change point on some row in %d of %d draws (%.1f%%), %d change points in all, %d blips named",
				mult, c.boots, c.offset, len(s.Rows), any, draws, 100*share, changes, blips)
			if share > 0.05+2*math.Sqrt(0.05*0.95/float64(draws)) {
				t.Errorf("layout %.2f, %d boots, offsets %.1f: change points in %.1f%% of draws, want at most 5%%", mult, c.boots, c.offset, 100*share)
			}
		}
	}
}

// pickRows are, for each boots in want, the first row of the suite
// (from row 17 × its index on) whose BootsFor is nearest it.
func pickRows(s *sim.Suite, boots []int, want []int) []int {
	var out []int
	for wi, w := range want {
		best := -1
		for j := range s.Rows {
			i := (j + 17*wi) % len(s.Rows)
			if boots[i] > 0 && (best < 0 || abs(boots[i]-w) < abs(boots[best]-w)) {
				best = i
			}
		}
		out = append(out, best)
	}
	return out
}

// TestSimStep: every row of the suite over 8 kernels, one row changed
// from kernel 5 on (index 4), for rows whose BootsFor a 10% step at
// DesignPower is nearest 3, DefaultBoots and 8 boots a kernel, run at those
// boots: a change of 10% is found between kernels 4 and 5 (After 3),
// with q at most alpha, in at least 80% of draws; and a change of
// exactly the row's mde at those boots (MDEShift at Power, from the
// spread of its boot medians) gets a change point in the row in at least
// 80% of draws, the mde's promise. Both less three binomial standard
// errors of 80% at the draws; with KBENCH_SIM_FULL also the DefaultBoots
// row at layout 1.2 drawn by the smoothed bootstrap (bootMedian). At
// layout 1.2 also with every kernel of every row moved by its own
// offset, 0.5 of the row's boot spread (separate builds, what BootsFor
// sizes for): the 10% asserted, the mde (MDEShift holds the allowance
// at its floor) logged. Without KBENCH_SIM_FULL only the DefaultBoots
// row's 10% at layout 1.2, 30 draws. KBENCH_SIM_STEP=layout=1.20/offset=0.5
// runs the cases whose name holds it.
func TestSimStep(t *testing.T) {
	s := sim.LoadSuite(t)
	draws := simDraws(200, 30, 20)
	for li, c := range []struct {
		mult, offset float64
		smooth       bool
	}{{layouts[0], 0, false}, {layouts[1], 0, false}, {layouts[1], 0, true}, {layouts[1], 0.5, false}} {
		mult, smooth := c.mult, c.smooth
		if (li != 1 && !full()) || (smooth && !full()) || !strings.Contains(fmt.Sprintf("layout=%.2f/offset=%.1f/smooth=%v", mult, c.offset, smooth), os.Getenv("KBENCH_SIM_STEP")) {
			continue // the noisier layout only; KBENCH_SIM_STEP picks cases
		}
		d := sim.Comparison{Count: simCount, Between: mult}
		sds, boots := needs(s, d, smooth)
		var offs []float64
		for _, sd := range sds {
			offs = append(offs, c.offset*sd)
		}
		for ri, row := range pickRows(s, boots, []int{3, DefaultBoots, 8}) {
			if ri != 1 && (!full() || smooth) {
				continue // the DefaultBoots row only: seconds a case
			}
			n := boots[row]
			mdeShift := MDEShift(sds[row], float64(n), 8, 3, DefaultOptions.Alpha/float64(len(s.Rows)), DefaultOptions.Power, DefaultOptions.Offset)
			for ci, change := range []float64{0.10, math.Expm1(mdeShift)} {
				if ci > 0 && !full() {
					continue
				}
				dc := d
				dc.Change = map[string]float64{s.Rows[row].Key(): change}
				var found, inRow, others int
				var mu sync.Mutex
				sim.Parallel(draws, func(i int) {
					rng := rand.New(rand.NewPCG(41, uint64(1000000*(10*li+2*ri+ci)+i)))
					res := Detect(drawSeries(s, rng, 8, n, 4, dc, offs, smooth), DefaultOptions)
					hit, other := false, false
					for r, rr := range res {
						for _, c := range rr.Changes {
							if r != row {
								other = true
							} else if c.After == 3 {
								hit = true
							}
						}
					}
					mu.Lock()
					defer mu.Unlock()
					if hit {
						found++
					}
					if len(res[row].Changes) > 0 {
						inRow++
					}
					if other {
						others++
					}
				})
				what := "the design's 10%"
				share := float64(found) / float64(draws)
				if ci == 1 {
					what, share = "the row's mde", float64(inRow)/float64(draws)
				}
				se := math.Sqrt(0.8 * 0.2 / float64(draws))
				t.Logf("layout %.2f×within, smoothed bootstrap %v, kernels' own offsets %.1f × boot spread, %s (boot medians ±%.1f%%), %d boots a kernel: %s, +%.1f%% from kernel 5: found between 4 and 5 in %d of %d draws, a change point in the row in %d; one on another row in %d",
					mult, smooth, c.offset, s.Rows[row].Key(), 100*sds[row], n, what, 100*change, found, draws, inRow, others)
				if share < 0.8-3*se && (c.offset == 0 || ci == 0) {
					t.Errorf("layout %.2f, %s at %d boots, %s (+%.1f%%): %.1f%% of draws, want at least 80%%", mult, s.Rows[row].Key(), n, what, 100*change, 100*share)
				}
			}
		}
	}
}

// TestSimNeeds logs each row's spread and boots for a 10% step.
func TestSimNeeds(t *testing.T) {
	if !testing.Verbose() {
		t.Skip("a listing: -v")
	}
	s := sim.LoadSuite(t)
	for _, mult := range layouts {
		sds, boots := needs(s, sim.Comparison{Count: simCount, Between: mult})
		for i := range s.Rows {
			t.Logf("layout %.2f %s: boot medians ±%.1f%%, %d boots a kernel", mult, s.Rows[i].Key(), 100*sds[i], boots[i])
		}
		sorted := slices.Sorted(slices.Values(boots))
		t.Logf("layout %.2f: boots a kernel by row (0: more than 100) %v", mult, sorted)
	}
}

// confirmBoots is the boots a side a planned A/B of a change of target
// would give a row whose boot medians spread sd, one row of a family of
// rows, with abplan's pilot of 6 at least: what a known spread needs,
// 2σ²(z(1-α/2) + z(power))²/log(1+target)², 0 past 30 (out of reach:
// no confirmation, no bisection).
func confirmBoots(sd, target float64, rows int) int {
	k := abmath.TQuantile(1-DefaultOptions.Alpha/float64(rows)/2, 1e9) + abmath.TQuantile(DefaultOptions.Power, 1e9)
	n := int(math.Ceil(2 * sd * sd * k * k / (math.Log1p(target) * math.Log1p(target))))
	if n > 30 {
		return 0
	}
	return max(n, 6)
}

// bisectCase is one setting of the bisection's simulations: the rows a
// confirmation of -target 5% admits in a family of rows, the images, the
// steps (image from which, size as a multiple of the target), a drift of
// every kernel over the search's boots (a multiple of the step),
// per-kernel offsets (normal, a multiple of the row's boot spread), and
// whether the kernels are separate builds (kbab's list names more than
// one image: the search allows for offsets of DefaultOptions.Offset).
type bisectCase struct {
	name    string
	rows    int
	images  int
	steps   [][2]float64 // {first image, size × target}; first < 0: drawn
	drift   float64
	offsets float64
	builds  bool
	right   float64 // the least share named right that the doc states
}

// bisectCases are the settings the doc's guarantees are shown at: the
// README's (one row, 2 images), one and four rows and the suite over 6
// images (8 kernels), a step of the target and of 0.7 × target, two half
// steps, a drifting reference, each of one image; separate builds with
// per-kernel offsets of 0, 0.2 and 0.5 boot spread.
var bisectCases = []bisectCase{
	{name: "README: 1 row, 2 images, step 5%", rows: 1, images: 2, steps: [][2]float64{{-1, 1}}, right: 0.9},
	{name: "1 row, 6 images, step 5%", rows: 1, images: 6, steps: [][2]float64{{-1, 1}}, right: 0.9},
	{name: "4 rows, 6 images, step 5%", rows: 4, images: 6, steps: [][2]float64{{-1, 1}}, right: 0.9},
	{name: "suite, 6 images, step 5%", rows: 86, images: 6, steps: [][2]float64{{-1, 1}}, right: 0.9},
	{name: "1 row, 6 images, step 3.5%", rows: 1, images: 6, steps: [][2]float64{{-1, 0.7}}, right: 0.7},
	{name: "1 row, 6 images, two steps of 2.5% (K3, K6)", rows: 1, images: 6, steps: [][2]float64{{1, 0.5}, {4, 0.5}}},
	{name: "1 row, 6 images, two steps of 20% (K3, K6)", rows: 1, images: 6, steps: [][2]float64{{1, 4}, {4, 4}}},
	{name: "1 row, 6 images, step 5%, drift 30% of it", rows: 1, images: 6, steps: [][2]float64{{-1, 1}}, drift: 0.3, right: 0.9},
	{name: "1 row, 6 builds, step 5%, no offsets", rows: 1, images: 6, steps: [][2]float64{{-1, 1}}, builds: true},
	{name: "1 row, 6 builds, step 5%, offsets 0.2 boot spread", rows: 1, images: 6, steps: [][2]float64{{-1, 1}}, offsets: 0.2, builds: true},
	{name: "1 row, 6 builds, step 5%, offsets 0.5 boot spread", rows: 1, images: 6, steps: [][2]float64{{-1, 1}}, offsets: 0.5, builds: true},
	{name: "1 row, 6 builds, step 20%, offsets 0.5 boot spread", rows: 1, images: 6, steps: [][2]float64{{-1, 4}}, offsets: 0.5, builds: true, right: 0.8},
}

// TestSimBisect drives Search, the type kbab -bisect drives, as kbab
// does (Next names the kernel, a boot of it gives Observe the row's
// boot median), on boots drawn from the suite's real rows at -count 10
// and the noisier layout, over the rows a planned A/B at -target 5%
// confirms in each case's family. Each run ends naming an image (right:
// the step's, or either of two half steps'; else wrong), "not one step"
// or undecided; a run whose confirmation (a t test of the two ends'
// boots at the family's level) does not find bad worse is unconfirmed,
// counted apart, as kbab boots no image there. Of the confirmed runs,
// wrong is at most 10% plus three binomial standard errors in every
// case (logged apart where every image sat nearer its side's level than
// the midpoint); two half steps end "not one step" or
// at one of the two in at least 90%, less as much.
func TestSimBisect(t *testing.T) {
	s := sim.LoadSuite(t)
	const target = 0.05
	d := sim.Comparison{Count: simCount, Between: layouts[1]}
	sds := map[int]float64{}
	for i := range s.Rows {
		sds[i] = medianSD(s, i, d)
	}
	for ci, c := range bisectCases {
		var rows []int
		for i := range s.Rows {
			if confirmBoots(sds[i], target, c.rows) > 0 {
				rows = append(rows, i)
			}
		}
		draws := simDraws(2000, 300, 60)
		var right, wrong, wrongPremise, broken, between, undecided, inAllowance, unconfirmed, boots int
		var mu sync.Mutex
		sim.Parallel(draws, func(i int) {
			rng := rand.New(rand.NewPCG(46, uint64(1000000*ci+i)))
			row := rows[i%len(rows)]
			var firsts []int
			level := make([]float64, c.images+2) // by kernel: good, images, bad
			for _, st := range c.steps {
				f := int(st[0])
				if f < 0 {
					f = rng.IntN(c.images + 1)
				}
				firsts = append(firsts, f)
				for k := f + 1; k < len(level); k++ {
					level[k] += math.Log1p(st[1] * target)
				}
			}
			for k := range level {
				level[k] += c.offsets * sds[row] * rng.NormFloat64()
			}
			shift := level[len(level)-1] - level[0]
			boot := func(k, n int) float64 {
				return bootMedian(s, rng, row, 0, d) * math.Exp(level[k]+c.drift*shift*float64(n)/100)
			}
			var good, bad []float64
			for range confirmBoots(sds[row], target, c.rows) {
				good, bad = append(good, boot(0, 0)), append(bad, boot(len(level)-1, 0))
			}
			// kbab bisects only where the confirmation found the row
			// changed: a t test at the family's level.
			if t, _, p := abmath.Welch(logs(good), logs(bad)); p > DefaultOptions.Alpha/float64(c.rows) || t < 0 {
				mu.Lock()
				defer mu.Unlock()
				unconfirmed++
				return
			}
			o := DefaultSearchOptions
			o.Step = target
			if c.builds {
				o.Offset = DefaultOptions.Offset
			}
			srch, err := NewSearch(good, bad, c.images, o)
			if err != nil {
				panic(err)
			}
			for n := 0; ; n++ {
				img, done := srch.Next()
				if done {
					break
				}
				if err := srch.Observe(img, boot(img+1, n)); err != nil {
					panic(err)
				}
			}
			res := srch.Result()
			// Search's premise: every image nearer its side's level
			// than the midpoint of good's and bad's (offsets included).
			premise := true
			for k := 1; k < len(level)-1; k++ {
				side := level[0]
				if slices.ContainsFunc(firsts, func(f int) bool { return k > f }) {
					side = level[len(level)-1]
				}
				premise = premise && math.Abs(level[k]-side) < math.Abs(level[len(level)-1]-level[0])/2
			}
			mu.Lock()
			defer mu.Unlock()
			boots += res.Boots
			if !premise {
				broken++
			}
			switch {
			case slices.Contains(firsts, res.FirstBad):
				right++
			case res.FirstBad >= 0 && premise:
				wrong++
				wrongPremise++
			case res.FirstBad >= 0:
				wrong++
			case res.Steps[len(res.Steps)-1].Decision == Between:
				between++
			default:
				undecided++
				if res.Steps[len(res.Steps)-1].Decision == InAllowance {
					inAllowance++
				}
			}
		})
		n := float64(draws - unconfirmed)
		se := 3 * math.Sqrt(0.9*0.1/n)
		t.Logf("%s: %d rows confirmable; %d of %d runs confirmed (%.1f%%), of which right %.1f%%, wrong %.1f%% (%.1f%% where every image sat nearer its side than the midpoint, as in %.1f%%), not one step %.1f%%, undecided %.1f%% (%.1f%% within the offset allowance of both); %.0f step boots a run",
			c.name, len(rows), draws-unconfirmed, draws, 100*n/float64(draws), 100*float64(right)/n, 100*float64(wrong)/n, 100*float64(wrongPremise)/n, 100-100*float64(broken)/n, 100*float64(between)/n, 100*float64(undecided)/n, 100*float64(inAllowance)/n, float64(boots)/n)
		if float64(wrong)/n > 0.1+se {
			t.Errorf("%s: wrong in %.1f%% of runs (%.1f%% where the premise held), want at most 10%%", c.name, 100*float64(wrong)/n, 100*float64(wrongPremise)/n)
		}
		if float64(right)/n < c.right-se {
			t.Errorf("%s: right in %.1f%% of runs, want at least %.0f%% (docs/comparing.md)", c.name, 100*float64(right)/n, 100*c.right)
		}
		// Two half steps, of half the target or four times it: not one
		// step, or one of the two, in at least 90% of runs.
		if len(c.steps) == 2 && float64(right+between)/n < 0.9-se {
			t.Errorf("%s: not one step or one of the two in %.1f%% of runs, want at least 90%%", c.name, 100*float64(right+between)/n)
		}
	}
}

func logs(v []float64) []float64 { return abmath.Scale{Log: true}.ToAll(v) }
