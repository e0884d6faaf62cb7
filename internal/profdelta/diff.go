//go:build linux

package profdelta

import (
	"fmt"

	"github.com/google/pprof/profile"

	"github.com/kbench/kbench/internal/kprofile"
)

// DiffProfile is the difference of a row's two sides as one pprof
// profile, as `pprof -diff_base OLD NEW -proto` writes it
// (docs/profiles.md): each side's boots merged, the old side's negated
// and labelled pprof::base=true; each side's values are multiplied by
// the other's boot count (whole numbers, so that no small value rounds
// away), so that both stand for the same number of boots.
func DiffProfile(old, new []Boot) (*profile.Profile, error) {
	var sides [2]*profile.Profile
	var n [2]int
	for i, boots := range [2][]Boot{old, new} {
		var ps []*profile.Profile
		for _, b := range boots {
			ps = append(ps, b.Profiles...)
		}
		if len(ps) == 0 {
			return nil, fmt.Errorf("the %s side has no profile", sideNames[i])
		}
		p, err := profile.Merge(ps)
		if err != nil {
			return nil, fmt.Errorf("the %s side's profiles do not merge: %v", sideNames[i], err)
		}
		sides[i], n[i] = p, len(boots)
	}
	sides[0].SetLabel("pprof::base", []string{"true"})
	sides[0].Scale(-float64(n[1]))
	sides[1].Scale(float64(n[0]))
	p, err := profile.Merge([]*profile.Profile{sides[1], sides[0]})
	if err != nil {
		return nil, fmt.Errorf("the two sides' profiles do not merge: %v", err)
	}
	// One run's comments (its sample count) would misdescribe the sum.
	p.Comments = nil
	if s, ok := kprofile.ReadSampling(sides[1]); ok {
		p.Comments = append(p.Comments, s.Header())
	}
	p.Comments = append(p.Comments,
		fmt.Sprintf("kbench profile delta: new side (%d boots, values times %d) minus old side (%d boots, times %d, label pprof::base=true)",
			n[1], n[0], n[0], n[1]))
	return p, nil
}
