//go:build linux

package abstat

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/abstat/sim"
)

// degenerateCases are comparisons of the suite's real rows whose
// statistics have nothing to work with somewhere (issue 28): no spread
// on one side, on both, in every boot; one sample; identical files; rows
// on one side only; a row in too few boots. Each must give rows with a
// stated reason, never a panic. The first is the one that panicked:
// every boot of both sides is the real run itself, so every metric's
// boot medians are equal with spread inside the boots, and Welch's
// degrees of freedom were infinite in tQuantile, whose go-moremath TDist
// panicked ("betainc: a or b too big; failed to converge").
func degenerateCases(t *testing.T) map[string][2]string {
	s := sim.LoadSuite(t)
	rng := rand.New(rand.NewPCG(28, 2))
	replay := sim.Comparison{Boots: [2]int{3, 3}, Replay: true}
	drawn := sim.Comparison{Boots: [2]int{3, 3}, Count: 10, Between: 0.35}
	files := func(old, new []sim.Boot) [2]string {
		a, b := suiteFiles(t, s, old, new, [2]map[string]string{})
		return [2]string{a, b}
	}
	cases := map[string][2]string{}
	old, new := s.Draw(rng, replay)
	cases["every boot alike"] = files(old, new)
	_, new = s.Draw(rng, drawn)
	cases["no spread on one side"] = files(old, new)
	old, new = s.Draw(rng, sim.Comparison{Boots: [2]int{1, 1}, Count: 1})
	cases["one sample"] = files(old, new)
	p := sim.File(t, sim.SuiteFile)
	cases["identical files"] = [2]string{p, p}
	// The new side lacks netbench (its package block cut out).
	data := string(sim.Data(t, sim.SuiteFile))
	var kept []string
	in := false
	for _, l := range strings.SplitAfter(data, "\n") {
		if strings.HasPrefix(l, "pkg: ") {
			in = strings.HasSuffix(l, "/netbench\n")
		}
		if !in || !strings.HasPrefix(l, "Benchmark") {
			kept = append(kept, l)
		}
	}
	less := filepath.Join(t.TempDir(), "less.txt")
	if err := os.WriteFile(less, []byte(strings.Join(kept, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	cases["rows on one side only"] = [2]string{p, less}
	// A row that two of the new side's three boots hold.
	old, new = s.Draw(rng, drawn)
	i := slices.IndexFunc(s.Rows, func(r sim.SuiteRow) bool { return r.Name == "SockfdGC-2" })
	new[0].Rows[i] = nil
	cases["too few boots"] = files(old, new)
	return cases
}

// TestDegenerate: no panic, and the reason stated where the statistics
// have nothing to work with.
func TestDegenerate(t *testing.T) {
	reasons := map[string]func(*Report) error{
		"every boot alike": func(r *Report) error {
			return everyRow(r, func(row *Row) bool {
				return row.Verdict == Same && hasNote(row, func(n Note) bool { return n.Kind == FlatBootsEqual })
			}, "~ with no spread")
		},
		"no spread on one side": func(r *Report) error {
			return everyRow(r, func(row *Row) bool {
				return row.boot != nil && hasNote(row, func(n Note) bool { return n.Kind == FlatBootsOld })
			}, "a note that old's boots have no spread")
		},
		"one sample": func(r *Report) error {
			return everyRow(r, func(row *Row) bool {
				return row.Verdict == Same && hasNote(row, func(n Note) bool { return n.Kind == Library && strings.Contains(n.Err.Error(), "need >= 6 samples") }) && row.TooFew
			}, "~, too few samples")
		},
		"identical files": func(r *Report) error {
			return everyRow(r, func(row *Row) bool { return row.Verdict == Same || row.Verdict == Underpowered }, "~ or underpowered")
		},
		"rows on one side only": func(r *Report) error {
			want := 0
			for _, row := range sim.LoadSuite(t).Rows {
				if strings.HasSuffix(row.Pkg, "/netbench") {
					want++
				}
			}
			if n := r.Count(OldOnly); n != want || want == 0 {
				return fmt.Errorf("%d rows old only, want netbench's %d", n, want)
			}
			return nil
		},
		"too few boots": func(r *Report) error {
			row := r.Find("", "sec/op", "SockfdGC-2")
			if row == nil || row.boot != nil || !hasNote(row, func(n Note) bool { return n.Kind == TooFewBoots && n.Boots == [2]int{3, 2} }) {
				return fmt.Errorf("SockfdGC-2: %+v, want per-sample statistics and a too-few-boots note", row)
			}
			return nil
		},
	}
	for name, files := range degenerateCases(t) {
		t.Run(name, func(t *testing.T) {
			r, err := Compare(files[0], files[1], defaults)
			if err != nil {
				t.Fatal(err)
			}
			if err := reasons[name](r); err != nil {
				t.Error(err)
			}
		})
	}
}

// hasNote reports whether one of row's notes is what want accepts.
func hasNote(row *Row, want func(Note) bool) bool { return slices.ContainsFunc(row.Notes, want) }

// everyRow checks ok on every Primary row compared on both sides.
func everyRow(r *Report, ok func(*Row) bool, want string) error {
	n := 0
	for _, tab := range r.Tables {
		for _, row := range tab.Rows {
			if row.Role != Primary || row.Sides[0] == nil || row.Sides[1] == nil {
				continue
			}
			n++
			if !ok(row) {
				return fmt.Errorf("%s %s: %s %v, want %s", tab.Pkg, row.Name, row.Verdict, row.Notes, want)
			}
		}
	}
	if n == 0 {
		return fmt.Errorf("no row compared")
	}
	return nil
}
