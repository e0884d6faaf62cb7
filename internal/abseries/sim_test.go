//go:build linux

package abseries

import (
	"math"
	"math/rand/v2"
	"os"
	"slices"
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
// within-boot spread, sim.Design). By default they draw a few hundred
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
func bootMedian(s *sim.Suite, rng *rand.Rand, i, side int, d sim.Design, smooth ...bool) float64 {
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
// kernel, the kernels from changeAt on changed (side 1).
func drawSeries(s *sim.Suite, rng *rand.Rand, kernels, boots, changeAt int, d sim.Design, smooth ...bool) [][][]float64 {
	rows := make([][][]float64, len(s.Rows))
	for i := range s.Rows {
		rows[i] = make([][]float64, kernels)
		for k := range kernels {
			side := 0
			if k >= changeAt {
				side = 1
			}
			for range boots {
				rows[i][k] = append(rows[i][k], bootMedian(s, rng, i, side, d, smooth...))
			}
		}
	}
	return rows
}

// medianSD is the spread of row i's boot medians on logs under d:
// drawn, 4000 boots (±1.1%).
func medianSD(s *sim.Suite, i int, d sim.Design, smooth ...bool) float64 {
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
func needs(s *sim.Suite, d sim.Design, smooth ...bool) (sds []float64, boots []int) {
	for i := range s.Rows {
		sd := medianSD(s, i, d, smooth...)
		sds = append(sds, sd)
		boots = append(boots, BootsFor(0.10, sd, 8, len(s.Rows), DefaultOptions.Alpha, DesignPower, 100))
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
	draws := simDraws(1000, 40, 20)
	for li, mult := range layouts {
		for bi, boots := range []int{DefaultBoots, 3} {
			if bi > 0 && !full() {
				continue // DefaultBoots only: seconds a case
			}
			d := sim.Design{Count: simCount, Between: mult}
			var any, changes int
			var mu sync.Mutex
			sim.Parallel(draws, func(i int) {
				rng := rand.New(rand.NewPCG(40, uint64(1000000*(2*li+bi)+i)))
				res := Detect(drawSeries(s, rng, 8, boots, 8, d), DefaultOptions)
				n := 0
				for _, r := range res {
					n += len(r.Changes)
				}
				mu.Lock()
				defer mu.Unlock()
				changes += n
				if n > 0 {
					any++
				}
			})
			share := float64(any) / float64(draws)
			t.Logf("no change, layout %.2f×within, %d boots a kernel, %d rows: a change point on some row in %d of %d draws (%.1f%%), %d change points in all",
				mult, boots, len(s.Rows), any, draws, 100*share, changes)
			if share > 0.05+2*math.Sqrt(0.05*0.95/float64(draws)) {
				t.Errorf("layout %.2f, %d boots: change points in %.1f%% of draws, want at most 5%%", mult, boots, 100*share)
			}
		}
	}
}

// pickRows are, for each boots in want, the first row of the suite (from
// package index from on) whose BootsFor is exactly it.
func pickRows(s *sim.Suite, boots []int, want []int) []int {
	var out []int
	for wi, w := range want {
		for j := range s.Rows {
			i := (j + 17*wi) % len(s.Rows)
			if boots[i] == w {
				out = append(out, i)
				break
			}
		}
	}
	return out
}

// TestSimStep: every row of the suite over 8 kernels, one row changed
// from kernel 5 on (index 4), for rows whose BootsFor a 10% step at
// DesignPower is 3, DefaultBoots and 8 boots a kernel, run at those
// boots: a change of 10% is found between kernels 4 and 5 (After 3),
// with q at most alpha, in at least 80% of draws; and a change of
// exactly the row's mde at those boots (MDEShift at Power, from the
// spread of its boot medians) gets a change point in the row in at least
// 80% of draws, the mde's promise. Both less three binomial standard
// errors of 80% at the draws; with KBENCH_SIM_FULL also the DefaultBoots
// row at layout 1.2 drawn by the smoothed bootstrap (bootMedian).
// Without KBENCH_SIM_FULL only the DefaultBoots row's 10% at layout 1.2,
// 30 draws.
func TestSimStep(t *testing.T) {
	s := sim.LoadSuite(t)
	draws := simDraws(1000, 30, 20)
	for li, c := range []struct {
		mult   float64
		smooth bool
	}{{layouts[0], false}, {layouts[1], false}, {layouts[1], true}} {
		mult, smooth := c.mult, c.smooth
		if (li != 1 && !full()) || (smooth && !full()) {
			continue // the noisier layout only
		}
		d := sim.Design{Count: simCount, Between: mult}
		sds, boots := needs(s, d, smooth)
		for ri, row := range pickRows(s, boots, []int{3, DefaultBoots, 8}) {
			if ri != 1 && (!full() || smooth) {
				continue // the DefaultBoots row only: seconds a case
			}
			n := boots[row]
			mdeShift := MDEShift(sds[row], float64(n), 8, 3, DefaultOptions.Alpha/float64(len(s.Rows)), DefaultOptions.Power)
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
					res := Detect(drawSeries(s, rng, 8, n, 4, dc, smooth), DefaultOptions)
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
				t.Logf("layout %.2f×within, smoothed bootstrap %v, %s (boot medians ±%.1f%%), %d boots a kernel: %s, +%.1f%% from kernel 5: found between 4 and 5 in %d of %d draws, a change point in the row in %d; one on another row in %d",
					mult, smooth, s.Rows[row].Key(), 100*sds[row], n, what, 100*change, found, draws, inRow, others)
				if share < 0.8-3*se {
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
		sds, boots := needs(s, sim.Design{Count: simCount, Between: mult})
		for i := range s.Rows {
			t.Logf("layout %.2f %s: boot medians ±%.1f%%, %d boots a kernel", mult, s.Rows[i].Key(), 100*sds[i], boots[i])
		}
		sorted := slices.Sorted(slices.Values(boots))
		t.Logf("layout %.2f: boots a kernel by row (0: more than 100) %v", mult, sorted)
	}
}

// confirmBoots is the boots a side a planned A/B of a 10% change would
// give a row whose boot medians spread sd, at the family's level of the
// suite with abplan's pilot of 6 at least: what a known spread needs,
// 2σ²(z(1-α/2) + z(power))²/log(1.1)², 0 past 30 (out of reach: no
// confirmation, no bisection).
func confirmBoots(sd float64, rows int) int {
	k := abmath.TQuantile(1-DefaultOptions.Alpha/float64(rows)/2, 1e9) + abmath.TQuantile(DefaultOptions.Power, 1e9)
	n := int(math.Ceil(2 * sd * sd * k * k / (math.Log1p(0.10) * math.Log1p(0.10))))
	if n > 30 {
		return 0
	}
	return max(n, 6)
}

// TestSimBisect: a bisection over 16 images with one 10% step, its place
// uniform over the 17 (the bad kernel itself included), on the rows of
// the suite whose 10% change a planned A/B confirms (confirmBoots), the
// good and bad kernels' boots those of the confirmation: the search ends
// at the right image in at least 90% of draws and at a wrong one in at
// most 10% (Search's promise), less or more three binomial standard
// errors.
func TestSimBisect(t *testing.T) {
	s := sim.LoadSuite(t)
	draws := simDraws(4000, 400, 200)
	for ci, c := range []struct {
		mult   float64
		smooth bool
	}{{layouts[0], false}, {layouts[1], false}, {layouts[0], true}, {layouts[1], true}} {
		li, mult, smooth := ci, c.mult, c.smooth
		if smooth && mult == layouts[0] && !full() {
			continue // the smoothed bootstrap at the noisier layout only
		}
		d := sim.Design{Count: simCount, Between: mult}
		var rows, confirm []int
		var sds []float64
		for i := range s.Rows {
			sd := medianSD(s, i, d, smooth)
			if n := confirmBoots(sd, len(s.Rows)); n > 0 {
				rows, confirm, sds = append(rows, i), append(confirm, n), append(sds, sd)
			}
		}
		var right, wrong, undecided, boots, steps int
		worst := map[int][2]int{} // by row: wrong, draws
		var mu sync.Mutex
		sim.Parallel(draws, func(i int) {
			rng := rand.New(rand.NewPCG(42, uint64(1000000*li+i)))
			ri := i % len(rows)
			row := rows[ri]
			dc := d
			dc.Change = map[string]float64{s.Rows[row].Key(): 0.10}
			var good, bad []float64
			for range confirm[ri] {
				good = append(good, bootMedian(s, rng, row, 0, dc, smooth))
				bad = append(bad, bootMedian(s, rng, row, 1, dc, smooth))
			}
			first := rng.IntN(17)
			srch, err := NewSearch(good, bad, 16, DefaultSearchOptions)
			if err != nil {
				panic(err)
			}
			for {
				img, done := srch.Next()
				if done {
					break
				}
				side := 0
				if img >= first {
					side = 1
				}
				if err := srch.Observe(img, bootMedian(s, rng, row, side, dc, smooth)); err != nil {
					panic(err)
				}
			}
			res := srch.Result()
			mu.Lock()
			defer mu.Unlock()
			boots += res.Boots
			steps += len(res.Steps)
			w := worst[row]
			w[1]++
			switch {
			case res.Undecided:
				undecided++
			case res.FirstBad == first:
				right++
			default:
				wrong++
				w[0]++
			}
			worst[row] = w
		})
		worstRow, worstShare := 0, -1.0
		for r, w := range worst {
			if sh := float64(w[0]) / float64(w[1]); sh > worstShare {
				worstRow, worstShare = r, sh
			}
		}
		pr, pw := float64(right)/float64(draws), float64(wrong)/float64(draws)
		t.Logf("bisection over 16 images, +10%% step, layout %.2f×within, smoothed bootstrap %v, %d rows (boot medians ±%.1f%% to ±%.1f%%, %d to %d boots a side confirmed): right in %d of %d draws (%.1f%%), wrong in %d (%.1f%%), undecided in %d; %.1f boots and %.1f steps a search; the worst row %s wrong in %.0f%% of its draws",
			mult, smooth, len(rows), 100*slices.Min(sds), 100*slices.Max(sds), slices.Min(confirm), slices.Max(confirm), right, draws, 100*pr, wrong, 100*pw, undecided,
			float64(boots)/float64(draws), float64(steps)/float64(draws), s.Rows[worstRow].Key(), 100*worstShare)
		if se := math.Sqrt(0.9 * 0.1 / float64(draws)); pr < 0.9-3*se || pw > 0.1+3*se {
			t.Errorf("layout %.2f, smoothed %v: right %.1f%%, wrong %.1f%%: want at least 90%% and at most 10%%", mult, smooth, 100*pr, 100*pw)
		}
	}
}
