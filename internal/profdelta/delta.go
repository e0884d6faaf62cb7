//go:build linux

package profdelta

import (
	"cmp"
	"fmt"
	"math"
	"regexp"
	"slices"

	"github.com/google/pprof/profile"

	"github.com/kbench/kbench/internal/abmath"
	"github.com/kbench/kbench/internal/kprofile"
)

// Options are the comparison's knobs: whether every frame names a
// function (by default only kernel frames do), the mean share of the
// row's samples a function reaches on a side to be listed, and the
// threads whose comm label to keep, as pprof's -tagfocus=comm= (nil:
// all).
type Options struct {
	AllFrames bool
	MinShare  float64
	Comm      *regexp.Regexp
}

// DefaultOptions list the kernel functions with at least 0.05% of a
// row's samples on a side.
var DefaultOptions = Options{MinShare: 0.0005}

// Boot is one boot's profiles of a row: its -count runs.
type Boot struct {
	ID       string
	Profiles []*profile.Profile
}

// By names the measure a Delta's lists are ordered by.
type By string

const (
	ByPerOp By = "per-op" // the function's cost per op
	ByShare By = "share"  // its share of the row's samples
)

// Form is how a function's samples are counted.
type Form string

const (
	Self     Form = "self"     // the function is the innermost frame
	Children Form = "children" // the function is on the stack
)

// Delta is one row's profile comparison: the IDs of each side's boots
// with samples, their samples (pooled over a boot's runs) and the boots
// without, each side's distinct ways of sampling, the options, and the
// functions of each form ordered by the |T| of Func.Order (the
// undefined last), then its |Change|. By is ByPerOp where every profile
// records its ops (kprofile.ReadOps), with each boot's Ops and the
// per-op value's Unit ("cpu nanoseconds"), else ByShare.
type Delta struct {
	Boots     [2][]string
	Samples   [2][]int64
	Empty     [2]int
	Sampling  [2][]kprofile.Sampling
	AllFrames bool
	MinShare  float64
	Comm      string // Options.Comm's pattern, "" for all samples
	By        By
	Ops       [2][]int64
	Unit      string
	Self      []Func
	Children  []Func
}

// Func is one function in one form: its share of the row's samples
// (the embedded Stat, LKP's measure) and, with ByPerOp, its samples'
// value over the boot's ops (PerOp), which orders the list.
type Func struct {
	Name string
	Stat
	PerOp *Stat
}

// Order is the Stat the list is ordered by: PerOp where there is one.
func (f Func) Order() Stat {
	if f.PerOp != nil {
		return *f.PerOp
	}
	return f.Stat
}

// Stat compares one measure of a function across the two sides' boots:
// the change of the means, relative to old's (+Inf for a new function),
// Welch's t-test of the per-boot values (abmath.Welch) and P's q among
// the form's functions.
type Stat struct {
	Old, New    Share
	Change, Rel float64
	T, DF, P, Q float64
}

// Share is a function's share of a side's samples (or its cost per op)
// per boot, in Delta.Boots' order, their mean and standard deviation
// (NaN for one boot).
type Share struct {
	Boots    []float64
	Mean, SD float64
}

// RSD is the share's relative spread, SD/Mean, as LKP's "± N%"; NaN
// where the mean is 0.
func (s Share) RSD() float64 {
	if s.Mean == 0 {
		return math.NaN()
	}
	return s.SD / s.Mean
}

// Forms are a Delta's lists, in the order reports show them.
func (d *Delta) Forms() []struct {
	Form  Form
	Funcs []Func
} {
	return []struct {
		Form  Form
		Funcs []Func
	}{{Self, d.Self}, {Children, d.Children}}
}

// Compute compares a row's boots of the old side with the new side's.
// It fails where a side has no boot with samples.
func Compute(old, new []Boot, o Options) (*Delta, error) {
	d := &Delta{AllFrames: o.AllFrames, MinShare: o.MinShare, By: ByPerOp}
	var keep func(*profile.Sample) bool
	if o.Comm != nil {
		d.Comm = o.Comm.String()
		keep = func(s *profile.Sample) bool { return slices.ContainsFunc(s.Label["comm"], o.Comm.MatchString) }
	}
	frame := kprofile.KernelFrame
	if o.AllFrames {
		frame = func(*profile.Location) bool { return true }
	}
	var sides [2][]bootSums // the boots with samples
	for side, boots := range [2][]Boot{old, new} {
		for _, b := range boots {
			bs := bootSums{form: [2]map[string]int64{{}, {}}}
			hasOps := true
			for _, p := range b.Profiles {
				d.addSampling(side, p)
				v := valueIndex(p)
				if v >= 0 && d.Unit == "" {
					d.Unit = p.SampleType[v].Type + " " + p.SampleType[v].Unit
				}
				bs.total += sum(p, v, keep)
				bs.samples += sampleCount(p, keep)
				n, ok := kprofile.ReadOps(p)
				hasOps = hasOps && ok
				bs.ops += n
				for _, w := range kprofile.Weigh(p, keep, frame, v) {
					bs.form[0][w.Name] += w.Flat
					bs.form[1][w.Name] += w.Cum
				}
			}
			if bs.total <= 0 {
				d.Empty[side]++
				continue
			}
			if !hasOps || len(b.Profiles) == 0 {
				d.By = ByShare
			}
			sides[side] = append(sides[side], bs)
			d.Ops[side] = append(d.Ops[side], bs.ops)
			d.Boots[side] = append(d.Boots[side], b.ID)
			d.Samples[side] = append(d.Samples[side], bs.samples)
		}
		if len(sides[side]) == 0 {
			of := ""
			if o.Comm != nil {
				of = " of a thread whose comm matches " + o.Comm.String()
			}
			return nil, fmt.Errorf("the %s side has no profile with samples%s (%d boots)", [2]string{"old", "new"}[side], of, len(boots))
		}
	}
	if d.By == ByShare {
		d.Ops = [2][]int64{}
	}
	for form, list := range []*[]Func{&d.Self, &d.Children} {
		names := map[string]bool{}
		for _, b := range slices.Concat(sides[:]...) {
			for name, n := range b.form[form] {
				if n != 0 {
					names[name] = true
				}
			}
		}
		var fs []Func
		for name := range names {
			var shares, perOp [2][]float64
			for side := range 2 {
				for _, b := range sides[side] {
					n := float64(b.form[form][name])
					shares[side] = append(shares[side], n/float64(b.total))
					perOp[side] = append(perOp[side], n/float64(b.ops))
				}
			}
			f := Func{Name: name, Stat: compare(shares)}
			if max(f.Old.Mean, f.New.Mean) < o.MinShare {
				continue
			}
			if d.By == ByPerOp {
				st := compare(perOp)
				f.PerOp = &st
			}
			fs = append(fs, f)
		}
		setQ(fs, func(f *Func) *Stat { return &f.Stat })
		if d.By == ByPerOp {
			setQ(fs, func(f *Func) *Stat { return f.PerOp })
		}
		slices.SortFunc(fs, byNoise)
		*list = fs
	}
	return d, nil
}

// bootSums are one boot's sums over its runs: each form's value by
// function, all samples' value, their number and the ops.
type bootSums struct {
	form                [2]map[string]int64
	total, samples, ops int64
}

// compare is the Stat of the per-boot values of the two sides.
func compare(v [2][]float64) Stat {
	var st Stat
	for side, s := range []*Share{&st.Old, &st.New} {
		s.Boots = v[side]
		s.Mean, s.SD = meanSD(s.Boots)
	}
	st.Change = st.New.Mean - st.Old.Mean
	st.Rel = st.Change / st.Old.Mean
	st.T, st.DF, st.P = abmath.Welch(st.Old.Boots, st.New.Boots)
	return st
}

// setQ sets the Benjamini-Hochberg q of the Stat of each of fs that at
// picks, among them.
func setQ(fs []Func, at func(*Func) *Stat) {
	ps := make([]float64, len(fs))
	for i := range fs {
		ps[i] = at(&fs[i]).P
	}
	for i, q := range abmath.BHQ(ps) {
		at(&fs[i]).Q = q
	}
}

// byNoise orders by the |T| of Func.Order, the undefined last, then by
// its |Change|, then by name.
func byNoise(fa, fb Func) int {
	a, b := fa.Order(), fb.Order()
	ta, tb := math.Abs(a.T), math.Abs(b.T)
	if na, nb := math.IsNaN(ta), math.IsNaN(tb); na != nb {
		if na {
			return 1
		}
		return -1
	} else if !na && ta != tb {
		return cmp.Compare(tb, ta)
	}
	return cmp.Or(cmp.Compare(math.Abs(b.Change), math.Abs(a.Change)), cmp.Compare(fa.Name, fb.Name))
}

// meanSD is x's mean and sample standard deviation, NaN for one value.
func meanSD(x []float64) (mean, sd float64) {
	mean, v := abmath.MeanVar(x)
	if len(x) < 2 {
		return mean, math.NaN()
	}
	return mean, math.Sqrt(v)
}

// valueIndex is the index of p's default sample type in its values, as
// pprof picks it: the last where none is named.
func valueIndex(p *profile.Profile) int {
	for i, st := range p.SampleType {
		if st.Type == p.DefaultSampleType {
			return i
		}
	}
	return len(p.SampleType) - 1
}

// sum adds value v of the samples keep takes (nil: all).
func sum(p *profile.Profile, v int, keep func(*profile.Sample) bool) int64 {
	var n int64
	for _, s := range p.Sample {
		if v >= 0 && v < len(s.Value) && (keep == nil || keep(s)) {
			n += s.Value[v]
		}
	}
	return n
}

// sampleCount is the samples of p that keep takes: its "samples" count
// where it has one (kprofile's first value), else its sample records.
func sampleCount(p *profile.Profile, keep func(*profile.Sample) bool) int64 {
	for i, st := range p.SampleType {
		if st.Type == "samples" && st.Unit == "count" {
			return sum(p, i, keep)
		}
	}
	var n int64
	for _, s := range p.Sample {
		if keep == nil || keep(s) {
			n++
		}
	}
	return n
}

// addSampling notes how p was sampled.
func (d *Delta) addSampling(side int, p *profile.Profile) {
	s, ok := kprofile.ReadSampling(p)
	if !ok {
		if v := valueIndex(p); v >= 0 {
			s.Event = p.SampleType[v].Type
		}
	}
	if !slices.Contains(d.Sampling[side], s) {
		d.Sampling[side] = append(d.Sampling[side], s)
	}
}
