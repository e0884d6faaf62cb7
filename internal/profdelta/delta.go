//go:build linux

package profdelta

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"

	"github.com/google/pprof/profile"

	"github.com/kbench/kbench/internal/abmath"
	"github.com/kbench/kbench/internal/kprofile"
)

// Options are the comparison's knobs (kernel frames name the
// functions): the mean share of the row's samples a function reaches
// on a side to be listed, and the threads whose comm label to keep, as
// pprof's -tagfocus=comm= (nil: all).
type Options struct {
	MinShare float64
	Comm     *regexp.Regexp
}

// DefaultOptions list the kernel functions with at least 0.05% of a
// row's samples on a side.
var DefaultOptions = Options{MinShare: 0.0005}

// Boot is one boot's profiles of a row: its -count runs.
type Boot struct {
	ID       string
	Profiles []*profile.Profile
}

// Form is how a function's samples are counted.
type Form string

const (
	Self     Form = "self"     // the function is the innermost frame
	Children Form = "children" // the function is on the stack
)

// Delta is one row's profile comparison, in the order -format json
// writes it (docs/kbcompare.md): the IDs of each side's boots with
// samples, the boots without (Empty), each side's distinct ways of
// sampling, the options, each boot's ops and the per-op value's unit
// ("cpu nanoseconds"), and the functions of each form ordered by the
// |t| of their cost per op, the undefined last, then its |change|.
type Delta struct {
	Boots    [2][]string            `json:"boot_ids"`
	Empty    [2]int                 `json:"-"`
	Sampling [2][]kprofile.Sampling `json:"sampling"`
	Comm     string                 `json:"comm,omitempty"`
	MinShare float64                `json:"min_share"`
	Unit     string                 `json:"per_op_unit,omitempty"`
	Ops      [2][]int64             `json:"ops"`
	Self     []Func                 `json:"self"`
	Children []Func                 `json:"children"`
}

// Func is one function in one form: its share of the row's samples
// (the embedded Stat, LKP's measure) and its samples' value over the
// boot's ops (PerOp), which orders the list.
type Func struct {
	Name string `json:"function"`
	Stat
	PerOp Stat `json:"per_op"`
}

// Stat compares one measure of a function across the two sides' boots:
// the change of the means, relative to old's (+Inf for a new function),
// Welch's t-test of the per-boot values (abmath.Welch) and P's q among
// the form's functions.
type Stat struct {
	Old    Share `json:"old"`
	New    Share `json:"new"`
	Change Num   `json:"change"`
	Rel    Num   `json:"rel_change"`
	T      Num   `json:"t"`
	DF     Num   `json:"df"`
	P      Num   `json:"p"`
	Q      Num   `json:"q"`
}

// Share is a function's share of a side's samples (or its cost per op)
// per boot, in Delta.Boots' order, their mean and standard deviation
// (NaN for one boot).
type Share struct {
	Mean  float64   `json:"mean"`
	SD    Num       `json:"sd"`
	Boots []float64 `json:"boots"`
}

// Num is a number JSON writes as null where it has none (NaN, ±Inf).
type Num float64

// MarshalJSON implements json.Marshaler.
func (x Num) MarshalJSON() ([]byte, error) {
	if f := float64(x); !math.IsNaN(f) && !math.IsInf(f, 0) {
		return json.Marshal(f)
	}
	return []byte("null"), nil
}

// UnmarshalJSON implements json.Unmarshaler: null is NaN.
func (x *Num) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*x = Num(math.NaN())
		return nil
	}
	return json.Unmarshal(b, (*float64)(x))
}

// Compute compares a row's boots of the old side with the new side's.
// It fails where a side has no boot with samples, or a profile with
// samples lacks its op count (kprofile.ReadOps: taken before kprofile
// recorded it; `go tool pprof -top` gives its shares).
func Compute(old, new []Boot, o Options) (*Delta, error) {
	d := &Delta{MinShare: o.MinShare}
	var keep func(*profile.Sample) bool
	if o.Comm != nil {
		d.Comm = o.Comm.String()
		keep = func(s *profile.Sample) bool { return slices.ContainsFunc(s.Label["comm"], o.Comm.MatchString) }
	}
	var sides [2][]bootSums // the boots with samples
	for side, boots := range [2][]Boot{old, new} {
		for _, b := range boots {
			bs := bootSums{form: [2]map[string]int64{{}, {}}}
			var noOps error
			for _, p := range b.Profiles {
				d.addSampling(side, p)
				v := valueIndex(p)
				if v >= 0 && d.Unit == "" {
					d.Unit = p.SampleType[v].Type + " " + p.SampleType[v].Unit
				}
				for _, s := range p.Sample {
					if v >= 0 && v < len(s.Value) && (keep == nil || keep(s)) {
						bs.total += s.Value[v]
					}
				}
				n, ok := kprofile.ReadOps(p)
				if !ok {
					noOps = fmt.Errorf("%s side, boot %s: a profile without its op count (taken before kprofile recorded it): take it again (`go tool pprof -top` gives its shares)", sideNames[side], b.ID)
				}
				if n > math.MaxInt64-bs.ops {
					return nil, fmt.Errorf("%s side, boot %s: its profiles' op counts add up past 2^63", sideNames[side], b.ID)
				}
				bs.ops += n
				for _, w := range kprofile.Weigh(p, keep, kprofile.KernelFrame, v) {
					bs.form[0][w.Name] += w.Flat
					bs.form[1][w.Name] += w.Cum
				}
			}
			if bs.total <= 0 {
				d.Empty[side]++
				continue
			}
			if noOps != nil {
				return nil, noOps
			}
			sides[side] = append(sides[side], bs)
			d.Ops[side] = append(d.Ops[side], bs.ops)
			d.Boots[side] = append(d.Boots[side], b.ID)
		}
		if len(sides[side]) == 0 {
			of := ""
			if o.Comm != nil {
				of = " of a thread whose comm matches " + o.Comm.String()
			}
			return nil, fmt.Errorf("the %s side has no profile with samples%s (%d boots)", sideNames[side], of, len(boots))
		}
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
		fs := []Func{}
		for name := range names {
			var shares, perOp [2][]float64
			for side := range 2 {
				for _, b := range sides[side] {
					n := float64(b.form[form][name])
					shares[side] = append(shares[side], n/float64(b.total))
					perOp[side] = append(perOp[side], n/float64(b.ops))
				}
			}
			f := Func{Name: name, Stat: compare(shares), PerOp: compare(perOp)}
			if max(f.Old.Mean, f.New.Mean) >= o.MinShare {
				fs = append(fs, f)
			}
		}
		setQ(fs, func(f *Func) *Stat { return &f.Stat })
		setQ(fs, func(f *Func) *Stat { return &f.PerOp })
		slices.SortFunc(fs, byNoise)
		*list = fs
	}
	return d, nil
}

// sideNames are the sides' names, by index.
var sideNames = [2]string{"old", "new"}

// bootSums are one boot's sums over its runs: each form's value by
// function, all samples' value and the ops.
type bootSums struct {
	form       [2]map[string]int64
	total, ops int64
}

// compare is the Stat of the per-boot values of the two sides.
func compare(v [2][]float64) Stat {
	var st Stat
	for side, s := range []*Share{&st.Old, &st.New} {
		s.Boots = v[side]
		s.Mean, s.SD = meanSD(s.Boots)
	}
	t, df, p := abmath.Welch(st.Old.Boots, st.New.Boots)
	st.Change, st.T, st.DF, st.P = Num(st.New.Mean-st.Old.Mean), Num(t), Num(df), Num(p)
	st.Rel = st.Change / Num(st.Old.Mean)
	return st
}

// setQ sets the Benjamini-Hochberg q of the Stat of each of fs that at
// picks, among them.
func setQ(fs []Func, at func(*Func) *Stat) {
	ps := make([]float64, len(fs))
	for i := range fs {
		ps[i] = float64(at(&fs[i]).P)
	}
	for i, q := range abmath.BHQ(ps) {
		at(&fs[i]).Q = Num(q)
	}
}

// byNoise orders by the |T| of Func.PerOp, the undefined last, then by
// its |Change|, then by name.
func byNoise(fa, fb Func) int {
	a, b := fa.PerOp, fb.PerOp
	ta, tb := math.Abs(float64(a.T)), math.Abs(float64(b.T))
	if na, nb := math.IsNaN(ta), math.IsNaN(tb); na != nb {
		if na {
			return 1
		}
		return -1
	} else if !na && ta != tb {
		return cmp.Compare(tb, ta)
	}
	return cmp.Or(cmp.Compare(math.Abs(float64(b.Change)), math.Abs(float64(a.Change))), cmp.Compare(fa.Name, fb.Name))
}

// meanSD is x's mean and sample standard deviation, NaN for one value.
func meanSD(x []float64) (mean float64, sd Num) {
	mean, v := abmath.MeanVar(x)
	if len(x) < 2 {
		return mean, Num(math.NaN())
	}
	return mean, Num(math.Sqrt(v))
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
