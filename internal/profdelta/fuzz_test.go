//go:build linux

package profdelta

import (
	"bytes"
	"math"
	"testing"

	"github.com/google/pprof/profile"
)

// FuzzCompute feeds Compute a profile file as a user's
// -profiles-old directory could hold it (Load's parse), beside a
// well-formed boot: it may refuse it, never panic, and every share and
// cost per op they report is finite.
func FuzzCompute(f *testing.F) {
	good := FixtureProfile(999, map[string]int64{"a;b": 90, FixtureInjected + ";b": 10})
	var buf bytes.Buffer
	if err := good.Write(&buf); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := profile.ParseData(data)
		if err != nil {
			return
		}
		old := []Boot{{ID: "o1", Profiles: []*profile.Profile{p}}, {ID: "o2", Profiles: []*profile.Profile{good}}}
		nw := []Boot{{ID: "n1", Profiles: []*profile.Profile{good}}, {ID: "n2", Profiles: []*profile.Profile{p}}}
		d, err := Compute(old, nw, DefaultOptions)
		if err != nil {
			return
		}
		for _, form := range forms(d) {
			for _, fn := range form.Funcs {
				for _, s := range []*Stat{&fn.Stat, &fn.PerOp} {
					for _, v := range []float64{s.Old.Mean, s.New.Mean} {
						if math.IsNaN(v) || math.IsInf(v, 0) {
							t.Fatalf("%s: %v mean %v", form.Form, fn.Name, v)
						}
					}
				}
			}
		}
	})
}
