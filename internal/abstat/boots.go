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

// bootCmp compares a row with boots as the samples, on the row's
// Scale: each side's boot medians and summary, Welch's two-sided p, and
// the spreads within and between boots (Row.Within, Row.Between).
type bootCmp struct {
	med                [2][]float64
	sides              [2]*Side
	p, within, between float64
}

// compareBoots tests old against new with boots as the samples, on sc,
// and bounds the change by Welch's interval at abmath.Confidence.
func compareBoots(old, new *BootSamples, sc abmath.Scale) (c *bootCmp, lo, hi float64) {
	c = &bootCmp{within: math.NaN()}
	var l [2][]float64
	var m, v [2]float64
	for i, bs := range []*BootSamples{old, new} {
		c.med[i] = bs.Medians()
		l[i] = sc.ToAll(c.med[i])
		m[i], v[i] = abmath.MeanVar(l[i])
		n, w := float64(len(l[i])), math.NaN()
		if n >= 2 {
			w = abmath.TQuantile(1-(1-abmath.Confidence)/2, n-1) * math.Sqrt(v[i]/n)
		}
		c.sides[i] = &Side{sc.From(m[i]), sc.From(m[i] - w), sc.From(m[i] + w), len(bs.all()), len(l[i])}
	}
	_, df, p := abmath.Welch(l[0], l[1])
	c.p = p
	w := 0.0
	if se := math.Sqrt(v[0]/float64(len(l[0])) + v[1]/float64(len(l[1]))); se > 0 {
		w = abmath.TQuantile(1-(1-abmath.Confidence)/2, df) * se
	}
	var ssWithin float64
	var dfWithin int
	for _, v := range slices.Concat(old.Values, new.Values) {
		_, vr := abmath.MeanVar(sc.ToAll(v))
		ssWithin += vr * float64(len(v)-1)
		dfWithin += len(v) - 1
	}
	if dfWithin > 0 {
		c.within = math.Sqrt(ssWithin / float64(dfWithin))
	}
	if df := len(l[0]) - 1 + len(l[1]) - 1; df > 0 {
		c.between = math.Sqrt((v[0]*float64(len(l[0])-1) + v[1]*float64(len(l[1])-1)) / float64(df))
	}
	return c, sc.Change(m[1]-m[0]-w, m[0]), sc.Change(m[1]-m[0]+w, m[0])
}
