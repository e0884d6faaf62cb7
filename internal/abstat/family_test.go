//go:build linux

package abstat

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/kbench/kbench/internal/abmath"
	"github.com/kbench/kbench/internal/abstat/sim"
)

// TestBHQ checks Benjamini-Hochberg's q-values against a worked example:
// sorted p 0.005, 0.01, 0.03, 0.04 of 4 give m·p/rank 0.02, 0.02, 0.04,
// 0.04, and each q is the least of those at its rank and above.
func TestBHQ(t *testing.T) {
	for _, c := range []struct{ p, q []float64 }{
		{[]float64{0.01, 0.04, 0.03, 0.005}, []float64{0.02, 0.04, 0.04, 0.02}},
		{[]float64{0.9, 0.8}, []float64{0.9, 0.9}},
		{[]float64{0.02, 0.02, 0.5}, []float64{0.03, 0.03, 0.5}},
		{[]float64{0.6}, []float64{0.6}},
		{[]float64{1, 1}, []float64{1, 1}},
		{nil, []float64{}},
	} {
		got := abmath.BHQ(c.p)
		if len(got) != len(c.q) {
			t.Fatalf("abmath.BHQ(%v) = %v, want %v", c.p, got, c.q)
		}
		for i := range got {
			if math.Abs(got[i]-c.q[i]) > 1e-12 {
				t.Errorf("abmath.BHQ(%v) = %v, want %v", c.p, got, c.q)
				break
			}
		}
	}
}

// TestRolesOnSuite: on the suite's real rows each row has one Primary
// unit, sec/op; the rates computed from its time (loads/s, ops/s,
// loops/s, tps, req/s, ...) are Derived; the measurements of their own
// (latency percentiles, slow transactions, server time per request, a
// victim's preemptions, the loaders' ops beside a victim) and the
// counters are Evidence; the family is the suite's rows, not their units.
func TestRolesOnSuite(t *testing.T) {
	p := sim.File(t, sim.SuiteFile)
	r, err := Compare(p, p, defaults)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Role{"sec/op": Primary, "fds/s": Derived, "loads/s": Derived, "loops/s": Derived, "ops/s": Derived,
		"pulses/s": Derived, "req/s": Derived, "roundtrips/s": Derived, "tps": Derived, "tps/flow": Derived,
		"loader-ops/s": Evidence, "p50-us": Evidence, "p99-us": Evidence, "p50-us/batch": Evidence, "p99-us/batch": Evidence,
		"server-us/req": Evidence, "slow/op": Evidence, "victim-preempt/s": Evidence}
	for _, tab := range r.Tables {
		w, ok := want[tab.Unit]
		if !ok {
			t.Errorf("unit %s: no role expected", tab.Unit)
		}
		for _, row := range tab.Rows {
			if row.Role != w {
				t.Errorf("%s %s %s: role %s, want %s", tab.Pkg, row.Name, tab.Unit, row.Role, w)
			}
		}
	}
	for _, tab := range r.Attribution.Tables {
		for _, row := range tab.Rows {
			if row.Role != Evidence {
				t.Errorf("counter %s %s: role %s, want evidence", row.Name, tab.Unit, row.Role)
			}
		}
	}
	if n := len(sim.LoadSuite(t).Rows); rows(r) != n || r.Family != n {
		t.Errorf("%d rows, family %d; want the suite's %d and %d", rows(r), r.Family, n, n)
	}
}

// TestOneVerdictPerRow: a row that moved is counted once, however many
// units show it. Issue 27 saw an A/A of seccompbench's Load rows, one
// run a side, summed up as "3 worse": one row in sec/op, loads/s and
// ops/s. Here a real Load row is made 50% slower on the new side of a
// one-boot comparison whose other rows replay the same run: one row
// worse, its rates worse with it, and the q of its rates its own.
func TestOneVerdictPerRow(t *testing.T) {
	s := sim.LoadSuite(t)
	const name = "Load/shape=single/loaders=1-2"
	old, new := s.Draw(rand.New(rand.NewPCG(27, 5)), sim.Comparison{Boots: [2]int{1, 1}, Replay: true,
		Change: map[string]float64{"seccompbench " + name: 0.5}})
	a, b := suiteFiles(t, s, old, new, [2]map[string]string{})
	r, err := Compare(a, b, defaults)
	if err != nil {
		t.Fatal(err)
	}
	if n := r.Count(Worse); n != 1 {
		t.Errorf("%d rows worse, want 1", n)
	}
	primary := rowOf(t, r, "sec/op", name)
	for _, u := range []string{"sec/op", "loads/s", "ops/s"} {
		row := rowOf(t, r, u, name)
		if row.Verdict != Worse || row.Q != primary.Q {
			t.Errorf("%s: %s q=%.4f, want worse with the row's q %.4f", u, row.Verdict, row.Q, primary.Q)
		}
	}
}
