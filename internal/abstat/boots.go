//go:build linux

package abstat

import (
	"math"
	"slices"

	"github.com/kbench/kbench/internal/abmath"
)

// MinBoots is how many boots each side needs before boots are the samples
// (docs/kbcompare.md says why boots, and why Welch's t-test on their logs).
const MinBoots = 3

// BootSamples are one side's samples of one row in one unit, grouped by
// boot: the experiment's two levels (boots, and samples within a boot),
// in file order.
type BootSamples struct {
	// IDs are the boots' kernel.boot_id values in order of first
	// appearance; "" stands for results above any boot id line.
	IDs []string
	// Values[i] are boot IDs[i]'s samples, in file order.
	Values [][]float64
	// Iters[i][j] is the iteration count (b.N) of sample Values[i][j], 0
	// where unknown: with sec/op, a sample's timed cost is Iters × value.
	Iters [][]int
}

// Add appends sample v of boot id, measured over n iterations (0:
// unknown).
func (b *BootSamples) Add(id string, v float64, n int) {
	i := len(b.IDs) - 1
	if i < 0 || b.IDs[i] != id {
		i = slices.Index(b.IDs, id)
	}
	if i < 0 {
		b.IDs, b.Values, b.Iters, i = append(b.IDs, id), append(b.Values, nil), append(b.Iters, nil), len(b.IDs)
	}
	b.Values[i] = append(b.Values[i], v)
	b.Iters[i] = append(b.Iters[i], n)
}

// Boots is the number of boots.
func (b *BootSamples) Boots() int { return len(b.IDs) }

// all returns every sample, boot after boot.
func (b *BootSamples) all() []float64 { return slices.Concat(b.Values...) }

// Medians returns each boot's median, in boot order.
func (b *BootSamples) Medians() []float64 {
	m := make([]float64, len(b.Values))
	for i, v := range b.Values {
		m[i] = abmath.Median(v)
	}
	return m
}

// BootCmp compares a row with boots as the samples, on the row's Scale.
type BootCmp struct {
	Old, New  []float64 // per-boot medians, in file order
	OldCenter float64   // the mean of Old on the row's Scale, mapped back (a geometric mean with logs)
	NewCenter float64
	DF, P     float64 // Welch's degrees of freedom and two-sided p
	// Within is the spread of samples inside a boot, Between that of boot
	// medians around their kernel's center, both as standard deviations
	// on the row's Scale (relative spreads), pooled over the two sides.
	// Within is NaN where every boot has one sample.
	Within, Between float64
}

// compareBoots tests old against new with boots as the samples, on sc,
// and bounds the change at abmath.Confidence by Welch's interval of the
// difference of the means on sc.
func compareBoots(old, new *BootSamples, sc abmath.Scale) (c *BootCmp, lo, hi float64) {
	c = &BootCmp{Old: old.Medians(), New: new.Medians()}
	lx, ly := sc.ToAll(c.Old), sc.ToAll(c.New)
	mo, vo := abmath.MeanVar(lx)
	mn, vn := abmath.MeanVar(ly)
	c.OldCenter, c.NewCenter = sc.From(mo), sc.From(mn)
	_, c.DF, c.P = abmath.Welch(lx, ly)
	w := 0.0
	if se := math.Sqrt(vo/float64(len(lx)) + vn/float64(len(ly))); se > 0 {
		w = abmath.TQuantile(1-(1-abmath.Confidence)/2, c.DF) * se
	}

	// Pooled spreads: within boots over every boot, between boots over
	// both sides' boot medians.
	var ssWithin float64
	var dfWithin int
	for _, v := range slices.Concat(old.Values, new.Values) {
		_, vr := abmath.MeanVar(sc.ToAll(v))
		ssWithin += vr * float64(len(v)-1)
		dfWithin += len(v) - 1
	}
	c.Within = math.NaN()
	if dfWithin > 0 {
		c.Within = math.Sqrt(ssWithin / float64(dfWithin))
	}
	if df := len(lx) - 1 + len(ly) - 1; df > 0 {
		c.Between = math.Sqrt((vo*float64(len(lx)-1) + vn*float64(len(ly)-1)) / float64(df))
	}
	return c, sc.Change(mn-mo-w, mo), sc.Change(mn-mo+w, mo)
}
