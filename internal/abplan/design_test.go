//go:build linux

package abplan

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// pilotRows are rows of normal boot medians (logs of spread sd[i]
// around 1 ms), boots a side each, B moved by shift.
func pilotRows(rng *rand.Rand, sd []float64, boots int, shift float64) []Row {
	var rows []Row
	for i, s := range sd {
		r := Row{Pkg: "example.com/p" + string(rune('a'+i%2)), Name: "R" + string(rune('a'+i)), Sample: 0.01}
		for side := range 2 {
			for range boots {
				m := 1e6 * math.Exp(s*rng.NormFloat64())
				if side == 1 {
					m *= 1 + shift
				}
				r.Medians[side] = append(r.Medians[side], m)
			}
		}
		rows = append(rows, r)
	}
	return rows
}

func planOf(t *testing.T, o Options, rows []Row, costs map[string]float64, spent float64) *Design {
	t.Helper()
	d, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	d.Plan(rows, costs, spent)
	return d
}

func needs(d *Design) []int {
	var n []int
	for _, pp := range d.Pkgs {
		for _, rp := range pp.Rows {
			n = append(n, rp.Need)
		}
	}
	return n
}

// TestPlanFromPilotOnly: a row's plan is its pilot's: boots past the
// pilot's, and a B moved by any change, leave s0, the boots and the
// statuses as they were.
func TestPlanFromPilotOnly(t *testing.T) {
	o := DefaultOptions(0.05)
	sd := []float64{0.005, 0.02, 0.03, 0.06}
	rng := rand.New(rand.NewPCG(36, 7))
	rows := pilotRows(rng, sd, o.Pilot, 0)
	costs := map[string]float64{"example.com/pa": 5, "example.com/pb": 5}
	base := planOf(t, o, rows, costs, 100)
	// Stage-2 boots of wild spread, and B 30% slower.
	more := pilotRows(rand.New(rand.NewPCG(36, 8)), []float64{1, 1, 1, 1}, 20, 0)
	moved := slices.Clone(rows)
	for i := range moved {
		for s := range 2 {
			moved[i].Medians[s] = slices.Concat(moved[i].Medians[s], more[i].Medians[s])
		}
		for b := range moved[i].Medians[1] {
			moved[i].Medians[1][b] *= 1.3
		}
	}
	got := planOf(t, o, moved, costs, 100)
	if !slices.Equal(needs(base), needs(got)) {
		t.Errorf("boots from the pilot %v; with stage-2 boots and B 30%% slower %v: want them equal", needs(base), needs(got))
	}
	for _, pp := range base.Pkgs {
		for _, rp := range pp.Rows {
			g := got.Find(pp.Pkg, rp.Name)
			if math.Abs(g.S0sq/rp.S0sq-1) > 1e-9 || g.Status != rp.Status {
				t.Errorf("%s: s0² %.3g %s, then %.3g %s", rp.Name, rp.S0sq, rp.Status, g.S0sq, g.Status)
			}
		}
	}
	if got.Pkgs[0].Rows[0].Done != 26 {
		t.Errorf("Done %d, want the 26 boots a side the row holds", got.Pkgs[0].Rows[0].Done)
	}
}

// TestBudget: the budget admits the rows whose boots fit, cheapest
// first, always those the pilot decides alone, and nothing else; Next
// stops (Cut) when the boots so far and the next pair would pass it, and
// the rows left short are undecided.
func TestBudget(t *testing.T) {
	o := DefaultOptions(0.05)
	rng := rand.New(rand.NewPCG(36, 9))
	rows := pilotRows(rng, []float64{0.001, 0.03, 0.045}, o.Pilot, 0)
	for i := range rows {
		rows[i].Pkg = "example.com/p"
	}
	costs := map[string]float64{"example.com/p": 10}
	free := planOf(t, o, rows, costs, 0)
	n := needs(free)
	if n[0] != o.Pilot || !(n[1] > o.Pilot && n[2] > n[1] && n[2] <= o.MaxBoots) {
		t.Fatalf("boots %v: want the pilot's for the quiet row, more for the others, within MaxBoots", n)
	}
	// The middle row's stage 2: its boots past the pilot, each pair two
	// boots of 10 s and the row's 10 samples of 0.01 s.
	mid := 2 * float64(n[1]-o.Pilot) * (10 + 10*0.01)
	o.Budget = 50 + mid + 1
	d := planOf(t, o, rows, costs, 50)
	var st []Status
	for _, rp := range d.Pkgs[0].Rows {
		st = append(st, rp.Status)
	}
	if !slices.Equal(st, []Status{Running, Running, OverBudget}) {
		t.Errorf("budget for the middle row's boots: %v, want running, running, over budget", st)
	}
	// Tighter than the pilot itself: the quiet row still runs (it needs
	// nothing more).
	o.Budget = 1
	if rp := planOf(t, o, rows, costs, 50).Pkgs[0].Rows[0]; rp.Status != Running {
		t.Errorf("a row the pilot decides alone, budget spent: %s, want running", rp.Status)
	}
	// Next: spent so far plus the next pair past the budget cuts the run.
	o.Budget = 50 + mid + 1
	d = planOf(t, o, rows, costs, 50)
	runs, pilot := d.Next(50)
	if pilot || len(runs) != 1 || !slices.Equal(runs[0].Rows, []string{rows[1].Name}) || runs[0].Count != o.Count {
		t.Fatalf("Next: %+v, pilot %v; want the middle row alone at -count %d", runs, pilot, o.Count)
	}
	if runs, _ := d.Next(o.Budget - 1); runs != nil || !d.Cut {
		t.Errorf("Next past the budget: %+v, cut %v; want nothing and cut", runs, d.Cut)
	}
	if res, _ := d.Test(rows[1]); res.Decided || !(res.MDE > o.Target) {
		t.Errorf("the row cut short: %+v, want undecided with an mde past the target", res)
	}
	if res, _ := d.Test(rows[0]); !res.Decided || !(res.MDE <= o.Target) {
		t.Errorf("the row the pilot decides: %+v, want decided with an mde within the target", res)
	}
}

// TestNew: the options a design refuses, the gate first.
func TestNew(t *testing.T) {
	o := DefaultOptions(0.05)
	if o.Threshold != 0.025 || DefaultOptions(0.2).Threshold != 0.05 {
		t.Errorf("gates %g and %g, want 2.5%% for a 5%% target and the report's 5%% for 20%%", o.Threshold, DefaultOptions(0.2).Threshold)
	}
	for _, bad := range []func(*Options){
		func(o *Options) { o.Threshold = o.Target },
		func(o *Options) { o.Target = 0 },
		func(o *Options) { o.Pilot = 1 },
		func(o *Options) { o.MaxBoots = o.Pilot - 1 },
		func(o *Options) { o.Count = 0 },
	} {
		o := DefaultOptions(0.05)
		bad(&o)
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v): no error", o)
		}
	}
}
