//go:build linux

package abstat

import (
	"math"
	"slices"

	"github.com/kbench/kbench/internal/abmath"
)

// MinBoots is how many boots each side needs before boots are the
// samples (docs/kbcompare.md says why).
const MinBoots = 3

// BootSamples are one side's samples of one row in one unit, by boot
// (IDs, in order of first appearance): Values[i] are boot IDs[i]'s, in
// file order, and Iters[i] their iteration counts (0: unknown).
type BootSamples struct {
	IDs    []string
	Values [][]float64
	Iters  [][]int
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

// BootCmp compares a row with boots as the samples, on the row's Scale:
// each side's boot medians, their means mapped back (a geometric mean
// with logs), Welch's degrees of freedom and two-sided p, and the
// standard deviations of samples within a boot (NaN where every boot
// has one) and of boot medians around their side's, pooled.
type BootCmp struct {
	Old, New               []float64
	OldCenter, NewCenter   float64
	DF, P, Within, Between float64
}

// compareBoots tests old against new with boots as the samples, on sc,
// and bounds the change by Welch's interval at abmath.Confidence.
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
