//go:build linux

package abstat

import (
	"math"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kbench/kbench/internal/abstat/sim"
)

// The simulation harness: comparisons of the whole suite drawn from its
// real run (package sim) and judged as Compare judges them. drawReport
// judges in memory, each row in its Primary unit (ns/op, tidied to
// sec/op), so that a thousand draws take seconds; TestDrawMatchesFiles
// shows it judges as Compare does on the same draws written as files.

// reportOf judges drawn boots as Compare would: one sec/op table per
// package, each row's samples by boot.
func reportOf(s *sim.Suite, old, new []sim.Boot, opts Options) *Report {
	rows := make([]rowBoots, len(s.Rows))
	for i := range s.Rows {
		for side, boots := range [][]sim.Boot{old, new} {
			for _, b := range boots {
				rows[i][side] = append(rows[i][side], b.Rows[i])
			}
		}
	}
	return reportOfRows(s, rows, opts)
}

// rowBoots are one row's drawn boots: per side, per boot, its results.
type rowBoots [2][][]sim.Sample

// reportOfRows judges each row's own boots (a planned run's rows hold
// boots of their own) as Compare would, as reportOf does.
func reportOfRows(s *sim.Suite, rows []rowBoots, opts Options) *Report {
	r := groupRows(s, rows)
	r.Opts = opts
	r.Judge()
	return r
}

// groupRows is reportOfRows before the judgement: the rows grouped, as
// a plan reads them.
func groupRows(s *sim.Suite, rows []rowBoots) *Report {
	r := &Report{}
	tables := map[string]*Table{}
	for i, sr := range s.Rows {
		pkg := path.Base(sr.Pkg)
		t := tables[pkg]
		if t == nil {
			t = &Table{Pkg: pkg, Path: sr.Pkg, Unit: "sec/op", Better: -1}
			tables[pkg] = t
			r.Tables = append(r.Tables, t)
		}
		row := &Row{Name: sr.Name, Role: Primary, Samples: make([]*BootSamples, 2)}
		row.primary = row
		for side, boots := range rows[i] {
			row.Samples[side] = &BootSamples{}
			r.Boots[side] = max(r.Boots[side], len(boots))
		}
		j := slices.Index(sr.Units, "ns/op")
		for side, boots := range rows[i] {
			for b, res := range boots {
				for _, x := range res {
					row.Samples[side].Add(sim.BootID(side, b), x.Values[j]*1e-9, x.Iters)
				}
			}
		}
		t.Rows = append(t.Rows, row)
	}
	r.BootMode = r.Boots[0] >= MinBoots && r.Boots[1] >= MinBoots
	return r
}

// drawReport draws one comparison of design d and judges it.
func drawReport(s *sim.Suite, rng *rand.Rand, d sim.Comparison, opts Options) *Report {
	old, new := s.Draw(rng, d)
	return reportOf(s, old, new, opts)
}

// flagged counts the rows called better, worse or changed.
func flagged(r *Report) int { return r.Count(Worse) + r.Count(Better) + r.Count(Changed) }

// aaDraws is how many whole-suite A/As TestSuiteAA draws per boot
// spread: a share of 2% (what 1000 draws gave) is then known within
// ±1.3% (two standard deviations of a binomial share), and the seeds fix
// the outcome.
const aaDraws = 500

// TestSuiteAA: a whole-suite A/A, 3+3 boots at -count=10, calls at
// least one of its rows better or worse in at most 5% of draws, at
// the boot spreads seen in real comparisons (0.35 and 1.2 times the
// within-boot spread, sim.Comparison). Judged on p, row by row, the same
// draws flag some row far more often: what the q-values are for.
func TestSuiteAA(t *testing.T) {
	if testing.Short() {
		t.Skip("1000 whole-suite draws: seconds")
	}
	s := sim.LoadSuite(t)
	for i, between := range []float64{0.35, 1.2} {
		d := sim.Comparison{Boots: [2]int{3, 3}, Count: 10, Between: between}
		rng := rand.New(rand.NewPCG(27, uint64(i)))
		var any, anyP, nominal, rows int
		for range aaDraws {
			r := drawReport(s, rng, d, defaults)
			if flagged(r) > 0 {
				any++
			}
			if slices.ContainsFunc(r.Tables, func(t *Table) bool {
				return slices.ContainsFunc(t.Rows, func(row *Row) bool {
					return row.P <= defaults.Alpha && math.Abs(row.Change) >= defaults.Threshold
				})
			}) {
				anyP++
			}
			rows, nominal = r.Family, nominal+r.Nominal
		}
		share, shareP := float64(any)/aaDraws, float64(anyP)/aaDraws
		t.Logf("between %.2f×within: %d rows; some row flagged in %.1f%% of %d A/As by q, %.1f%% by p; p <= 0.05 in %.2f%% of rows",
			between, rows, 100*share, aaDraws, 100*shareP, 100*float64(nominal)/float64(aaDraws*rows))
		if rows != len(s.Rows) {
			t.Errorf("%d rows compared, want the suite's %d", rows, len(s.Rows))
		}
		if share > 0.05 {
			t.Errorf("between %.2f×within: a whole-suite A/A flagged some row in %.1f%% of draws, want at most 5%%", between, 100*share)
		}
		if shareP <= share {
			t.Errorf("judged on p, some row was flagged in %.1f%% of draws, no more than by q (%.1f%%): the q-values do nothing", 100*shareP, 100*share)
		}
	}
}

// suiteFiles writes drawn boots as two result files, with fingerprint
// lines fp.
func suiteFiles(t *testing.T, s *sim.Suite, old, new []sim.Boot, fp [2]map[string]string) (string, string) {
	t.Helper()
	var paths [2]string
	for side, boots := range [][]sim.Boot{old, new} {
		paths[side] = filepath.Join(t.TempDir(), []string{"old.txt", "new.txt"}[side])
		if err := os.WriteFile(paths[side], []byte(s.Text(boots, fp[side])), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return paths[0], paths[1]
}

// TestDrawMatchesFiles: the in-memory judgement of a draw is Compare's
// of the same draw written as result files: the same rows, p, q and
// verdicts, and the other units of each row do not enter its family.
func TestDrawMatchesFiles(t *testing.T) {
	s := sim.LoadSuite(t)
	rng := rand.New(rand.NewPCG(27, 9))
	const changed = "Sockfd/shape=stress-ng/kind=file/fds=16/run=serial/mm=separate/cpu=any-2"
	d := sim.Comparison{Boots: [2]int{3, 3}, Count: 10, Between: 0.35, Change: map[string]float64{"sockfdbench " + changed: 0.3}}
	old, new := s.Draw(rng, d)
	mem := reportOf(s, old, new, defaults)
	a, b := suiteFiles(t, s, old, new, [2]map[string]string{})
	r, err := Compare(a, b, defaults)
	if err != nil {
		t.Fatal(err)
	}
	if r.Family != mem.Family || rows(r) != len(s.Rows) {
		t.Errorf("files: %d rows, family %d; in memory family %d; want the suite's %d", rows(r), r.Family, mem.Family, len(s.Rows))
	}
	for _, mt := range mem.Tables {
		for _, m := range mt.Rows {
			f := rowOf(t, r, "sec/op", m.Name)
			// The files print values to 6 digits: p agrees to a few parts in 1e4.
			if f.Role != Primary || f.Verdict != m.Verdict || math.Abs(f.P-m.P) > 1e-3 || math.Abs(f.Q-m.Q) > 1e-3 {
				t.Errorf("%s: files %s %s p=%.4f q=%.4f, memory %s p=%.4f q=%.4f", m.Name, f.Role, f.Verdict, f.P, f.Q, m.Verdict, m.P, m.Q)
			}
		}
	}
	if got := rowOf(t, r, "sec/op", changed); got.Verdict != Worse {
		t.Errorf("the row made 30%% slower is %s (p=%.4f q=%.4f)", got.Verdict, got.P, got.Q)
	}
}
