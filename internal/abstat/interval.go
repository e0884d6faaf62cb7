//go:build linux

package abstat

import (
	"math"

	"github.com/kbench/kbench/internal/abmath"
)

// changeInterval returns the confidence interval (at abmath.Confidence) of a
// compared row's change, for the test its verdict used: with boots as
// samples, Welch's interval for the difference of the means of boot
// medians on the row's Scale; per sample, the Hodges-Lehmann interval
// that goes with the U-test (abmath.ShiftInterval). Either end is ±Inf
// where the samples are too few to bound it.
func changeInterval(row *Row) (lo, hi float64) {
	if row.Old == nil || row.New == nil {
		return math.NaN(), math.NaN()
	}
	sc := row.Scale
	if b := row.Boot; b != nil {
		mo, vo := abmath.MeanVar(sc.ToAll(b.Old))
		mn, vn := abmath.MeanVar(sc.ToAll(b.New))
		se := math.Sqrt(vo/float64(b.N1) + vn/float64(b.N2))
		d := mn - mo
		w := 0.0
		if se > 0 {
			w = abmath.TQuantile(1-(1-abmath.Confidence)/2, b.DF) * se
		}
		return sc.Change(d-w, mo), sc.Change(d+w, mo)
	}
	lx := sc.ToAll(row.Old.Values)
	lo, hi = abmath.ShiftInterval(lx, sc.ToAll(row.New.Values))
	c := abmath.Median(lx)
	return sc.Change(lo, c), sc.Change(hi, c)
}
