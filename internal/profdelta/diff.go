//go:build linux

package profdelta

import (
	"fmt"

	"github.com/google/pprof/profile"

	"github.com/kbench/kbench/internal/kprofile"
)

// DiffProfile is the difference of a row's two sides as one pprof
// profile, in the form `pprof -diff_base OLD NEW -proto` writes: the new
// side's samples, and the old side's negated and labelled
// pprof::base=true, so that pprof shows it as if given the two sides
// (`go tool pprof -http=: DIFF.pb.gz` draws a differential flame graph).
// Each side is its boots' profiles merged; so that unequal boot counts
// do not weigh a side, the new side's values are multiplied by the old
// side's boots and the old side's by the new side's (whole numbers, so
// that no small value rounds away): both then stand for the same
// number of boots, and with the same op count a side, for the same
// work.
func DiffProfile(old, new []Boot) (*profile.Profile, error) {
	var sides [2]*profile.Profile
	var n [2]int
	for i, boots := range [2][]Boot{old, new} {
		var ps []*profile.Profile
		for _, b := range boots {
			ps = append(ps, b.Profiles...)
		}
		if len(ps) == 0 {
			return nil, fmt.Errorf("the %s side has no profile", [2]string{"old", "new"}[i])
		}
		p, err := profile.Merge(ps)
		if err != nil {
			return nil, fmt.Errorf("the %s side's profiles do not merge: %v", [2]string{"old", "new"}[i], err)
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
