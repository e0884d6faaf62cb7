//go:build linux

package abstat

import (
	"math"
	"testing"

	"github.com/kbench/kbench/internal/abstat/sim"
)

// TestChangeInterval: the interval of each test holds the change, and a
// clear change's interval excludes no change; an A/A's includes it.
func TestChangeInterval(t *testing.T) {
	for _, c := range []struct {
		name       string
		old, new   []sim.BootFile
		wantNoZero bool // the interval excludes 0
		welch      bool
	}{
		{"boots, worse", sim.BootFiles("a", sim.BootsA, nil), sim.BootFiles("b", sim.BootsB, nil), true, true},
		{"boots, A/A", sim.BootFiles("a", sim.BootsA, nil), sim.BootFiles("a2", sim.BootsB, nil), false, true},
		{"per sample, worse", sim.BootFiles("a", sim.OneA, nil), sim.BootFiles("b", sim.OneB, nil), true, false},
		{"per sample, A/A", sim.BootFiles("a", sim.OneA, nil), sim.BootFiles("a2", sim.OneB, nil), false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := Compare(sim.Assemble(t, "old.txt", c.old...), sim.Assemble(t, "new.txt", c.new...), defaults)
			if err != nil {
				t.Fatal(err)
			}
			for _, unit := range []string{"sec/op", "loops/s"} {
				row := rowOf(t, r, unit, sim.SyscallRow)
				if (row.boot != nil) != c.welch {
					t.Fatalf("%s: boots as samples %v, want %v", unit, row.boot != nil, c.welch)
				}
				lo, hi := row.ChangeLo, row.ChangeHi
				if !(lo <= row.Change && row.Change <= hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
					t.Errorf("%s: change %+.3f outside its interval [%+.3f, %+.3f]", unit, row.Change, lo, hi)
				}
				if excludes := lo > 0 || hi < 0; excludes != c.wantNoZero {
					t.Errorf("%s: interval [%+.3f, %+.3f] excludes 0: %v, want %v (p=%.3f)", unit, lo, hi, excludes, c.wantNoZero, row.P)
				}
			}
		})
	}
}
