//go:build linux

package profdelta

import (
	"cmp"
	"fmt"
	"math"
	"regexp"
	"slices"

	"github.com/google/pprof/profile"

	"github.com/kbench/kbench/internal/abstat"
	"github.com/kbench/kbench/internal/kprofile"
)

// Options are the comparison's knobs.
type Options struct {
	// AllFrames lets every frame name a function, user code included;
	// by default only kernel frames do.
	AllFrames bool
	// MinShare is the mean share (a fraction of the row's samples) a
	// function reaches on at least one side, in the form compared, to be
	// listed and tested; below it a share is a few samples a boot.
	MinShare float64
	// Comm keeps the samples whose comm label (the thread's name) it
	// matches, as pprof's -tagfocus=comm=: the benchmark's own process
	// on a machine that runs others. nil keeps all.
	Comm *regexp.Regexp
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

// Delta is one row's profile comparison.
type Delta struct {
	// Boots are the IDs of each side's boots that had samples, and
	// Samples their number of samples (pooled over the boot's runs).
	Boots   [2][]string
	Samples [2][]int64
	// Empty counts each side's boots without a sample, left out.
	Empty [2]int
	// Sampling lists each side's distinct ways of sampling, from the
	// profiles' headers, in order of first appearance.
	Sampling  [2][]kprofile.Sampling
	AllFrames bool // Options.AllFrames
	MinShare  float64
	Comm      string // Options.Comm's pattern, "" for all samples
	// Self and Children list the functions, each form ordered by |T|
	// (the undefined last), then |Change|.
	Self, Children []Func
}

// Func is one function in one form.
type Func struct {
	Name     string
	Old, New Share
	Change   float64 // New.Mean - Old.Mean, a fraction of the row's samples
	// Rel is Change/Old.Mean: +Inf for a function new to the row.
	Rel float64
	// T, DF and P are Welch's t-test's of the per-boot shares (new
	// minus old), NaN (P 1) with fewer than 2 boots a side; T is ±Inf
	// where neither side varies but the means differ. Q is P's
	// Benjamini-Hochberg q among the row's functions of the form.
	T, DF, P, Q float64
}

// Share is a function's share of a side's samples across its boots.
type Share struct {
	Boots []float64 // per boot, in Delta.Boots' order
	Mean  float64
	SD    float64 // the sample standard deviation of Boots; NaN for one boot
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
	d := &Delta{AllFrames: o.AllFrames, MinShare: o.MinShare}
	var keep func(*profile.Sample) bool
	if o.Comm != nil {
		d.Comm = o.Comm.String()
		keep = func(s *profile.Sample) bool { return slices.ContainsFunc(s.Label["comm"], o.Comm.MatchString) }
	}
	frame := kprofile.KernelFrame
	if o.AllFrames {
		frame = func(*profile.Location) bool { return true }
	}
	// shares[side][boot][form] by function name.
	var shares [2][][2]map[string]float64
	for side, boots := range [2][]Boot{old, new} {
		for _, b := range boots {
			flat, cum := map[string]int64{}, map[string]int64{}
			var total, samples int64
			for _, p := range b.Profiles {
				d.addSampling(side, p)
				v := valueIndex(p)
				total += sum(p, v, keep)
				samples += sampleCount(p, keep)
				for _, w := range kprofile.Weigh(p, keep, frame, v) {
					flat[w.Name] += w.Flat
					cum[w.Name] += w.Cum
				}
			}
			if total <= 0 {
				d.Empty[side]++
				continue
			}
			var f [2]map[string]float64
			for i, m := range []map[string]int64{flat, cum} {
				f[i] = map[string]float64{}
				for name, n := range m {
					if n != 0 {
						f[i][name] = float64(n) / float64(total)
					}
				}
			}
			shares[side] = append(shares[side], f)
			d.Boots[side] = append(d.Boots[side], b.ID)
			d.Samples[side] = append(d.Samples[side], samples)
		}
		if len(shares[side]) == 0 {
			of := ""
			if o.Comm != nil {
				of = " of a thread whose comm matches " + o.Comm.String()
			}
			return nil, fmt.Errorf("the %s side has no profile with samples%s (%d boots)", [2]string{"old", "new"}[side], of, len(boots))
		}
	}
	for form := range 2 {
		names := map[string]bool{}
		for side := range 2 {
			for _, b := range shares[side] {
				for name := range b[form] {
					names[name] = true
				}
			}
		}
		var fs []Func
		for name := range names {
			f := Func{Name: name}
			for side, s := range []*Share{&f.Old, &f.New} {
				for _, b := range shares[side] {
					s.Boots = append(s.Boots, b[form][name])
				}
				s.Mean, s.SD = meanSD(s.Boots)
			}
			if max(f.Old.Mean, f.New.Mean) < o.MinShare {
				continue
			}
			f.Change = f.New.Mean - f.Old.Mean
			f.Rel = f.Change / f.Old.Mean
			f.T, f.DF, f.P = abstat.Welch(f.Old.Boots, f.New.Boots)
			fs = append(fs, f)
		}
		ps := make([]float64, len(fs))
		for i := range fs {
			ps[i] = fs[i].P
		}
		for i, q := range abstat.BHQ(ps) {
			fs[i].Q = q
		}
		slices.SortFunc(fs, byNoise)
		if form == 0 {
			d.Self = fs
		} else {
			d.Children = fs
		}
	}
	return d, nil
}

// byNoise orders by |T|, the undefined last, then by |Change|, then by
// name.
func byNoise(a, b Func) int {
	ta, tb := math.Abs(a.T), math.Abs(b.T)
	if na, nb := math.IsNaN(ta), math.IsNaN(tb); na != nb {
		if na {
			return 1
		}
		return -1
	} else if !na && ta != tb {
		return cmp.Compare(tb, ta)
	}
	return cmp.Or(cmp.Compare(math.Abs(b.Change), math.Abs(a.Change)), cmp.Compare(a.Name, b.Name))
}

func meanSD(x []float64) (mean, sd float64) {
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	if len(x) < 2 {
		return mean, math.NaN()
	}
	var ss float64
	for _, v := range x {
		ss += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(ss / float64(len(x)-1))
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
