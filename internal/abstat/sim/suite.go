//go:build linux

package sim

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/kbench/kbench/internal/abfile"
	"github.com/kbench/kbench/internal/abmath"
)

// SuiteFile is the whole-suite fixture: rows at -count=10 in one boot
// (testdata/README.md).
const SuiteFile = "suite-count10.txt"

// Suite is a real run of the suite's rows, to draw comparisons from,
// and each unit's direction (+1 higher is better, -1 lower, 0 unknown).
type Suite struct {
	Rows   []SuiteRow
	better map[string]int
}

// SuiteRow is one row of the fixture: its import path, full name, the
// units as the results print them, each result's iteration count and
// values, and its within-boot spread, 1.4826 times the median absolute
// deviation of the logs of its ns/op samples.
type SuiteRow struct {
	Pkg, Name string
	Units     []string
	Iters     []int
	Results   [][]float64
	Within    float64
}

// Key names a row as Comparison.Change does: "seccompbench Load/...-2".
func (r *SuiteRow) Key() string { return r.Pkg[strings.LastIndex(r.Pkg, "/")+1:] + " " + r.Name }

// NsOp returns the row's ns/op samples.
func (r *SuiteRow) NsOp() []float64 {
	j := slices.Index(r.Units, "ns/op")
	out := make([]float64, len(r.Results))
	for i, v := range r.Results {
		out[i] = v[j]
	}
	return out
}

// LoadSuite reads the whole-suite fixture.
func LoadSuite(t testing.TB) *Suite {
	t.Helper()
	files, units, err := abfile.ReadData([]string{SuiteFile}, [][]byte{Data(t, SuiteFile)})
	if err != nil {
		t.Fatal(err)
	}
	s := &Suite{better: map[string]int{}}
	for k, m := range units {
		if k.Key == "better" {
			s.better[m.OrigUnit] = map[string]int{"higher": 1, "lower": -1}[m.Value]
		}
	}
	index := map[string]int{}
	for _, res := range files[0].Results {
		pkg := res.Config["pkg"]
		key := pkg + " " + res.Name
		i, ok := index[key]
		if !ok {
			i = len(s.Rows)
			index[key] = i
			s.Rows = append(s.Rows, SuiteRow{Pkg: pkg, Name: res.Name})
		}
		r := &s.Rows[i]
		var units []string
		var vals []float64
		for _, v := range res.Values {
			u, x := v.Unit, v.Value
			if v.OrigUnit != "" {
				u, x = v.OrigUnit, v.OrigValue
			}
			units, vals = append(units, u), append(vals, x)
		}
		if r.Units == nil {
			r.Units = units
		} else if !slices.Equal(r.Units, units) {
			t.Fatalf("%s: units %v, then %v", key, r.Units, units)
		}
		r.Iters, r.Results = append(r.Iters, res.Iters), append(r.Results, vals)
	}
	for i := range s.Rows {
		r := &s.Rows[i]
		if !slices.Contains(r.Units, "ns/op") {
			t.Fatalf("%s: no ns/op", r.Key())
		}
		logs := r.NsOp()
		for j, x := range logs {
			logs[j] = math.Log(x)
		}
		m := abmath.Median(logs)
		for j, x := range logs {
			logs[j] = math.Abs(x - m)
		}
		r.Within = 1.4826 * abmath.Median(logs) // the median absolute deviation
	}
	return s
}

// Comparison is a simulated comparison of the whole suite: boots a side,
// samples per row and boot, and each row's boot-to-boot spread as a
// multiple of its within-boot spread (a boot moves all of its samples
// of the row by exp(ε), ε normal with sd Between × Within; real
// comparisons had 0.35 to 1.2). Change is, by row Key, the relative
// change of the op's time on the new side; Replay makes every boot the
// real run itself.
type Comparison struct {
	Boots   [2]int
	Count   int
	Between float64
	Change  map[string]float64
	Replay  bool
}

// Boot is one simulated boot: its id and each row's results drawn.
type Boot struct {
	ID   string
	Rows [][]Sample
}

// Sample is one drawn result in the row's Units.
type Sample struct {
	Iters  int
	Values []float64
}

// Draw draws the boots of both sides: per boot and row, Count of the
// row's real results drawn with replacement, moved by the boot's layout
// factor and, on the new side, by the row's change (times multiplied,
// rates divided).
func (s *Suite) Draw(rng *rand.Rand, d Comparison) (old, new []Boot) {
	sides := [2][]Boot{}
	for side := range sides {
		for b := range d.Boots[side] {
			boot := Boot{ID: BootID(side, b)}
			for i := range s.Rows {
				boot.Rows = append(boot.Rows, s.DrawRow(rng, i, side, d))
			}
			sides[side] = append(sides[side], boot)
		}
	}
	return sides[0], sides[1]
}

// BootID is the id Draw gives boot b (from 0) of side (0 old, 1 new).
func BootID(side, b int) string { return fmt.Sprintf("%08x-0000-4000-8000-%012d", side+1, b+1) }

// DrawRow draws row i's results in one boot of side (0 old, 1 new), as
// Draw does, for a planned run whose rows hold boots of their own.
func (s *Suite) DrawRow(rng *rand.Rand, i, side int, d Comparison) []Sample {
	r := s.Rows[i]
	f, n := math.Exp(d.Between*r.Within*rng.NormFloat64()), d.Count
	if d.Replay {
		f, n = 1, len(r.Results)
	}
	if side == 1 {
		f *= 1 + d.Change[r.Key()]
	}
	var rs []Sample
	for k := range n {
		j := k
		if !d.Replay {
			j = rng.IntN(len(r.Results))
		}
		vals := slices.Clone(r.Results[j])
		for u, name := range r.Units {
			switch {
			case s.better[name] > 0:
				vals[u] /= f
			case s.better[name] < 0 || name == "ns/op":
				vals[u] *= f
			}
		}
		rs = append(rs, Sample{r.Iters[j], vals})
	}
	return rs
}

// Text is boots as one result file, as `tee -a` after each boot would
// write it, with fingerprint lines fp.
func (s *Suite) Text(boots []Boot, fp map[string]string) string {
	var b strings.Builder
	for _, boot := range boots {
		pkg := ""
		for i, r := range s.Rows {
			if r.Pkg != pkg {
				if pkg != "" {
					fmt.Fprintf(&b, "PASS\nok  \t%s\t1.0s\n", pkg)
				}
				pkg = r.Pkg
				for _, k := range slices.Sorted(maps.Keys(fp)) {
					fmt.Fprintf(&b, "# kbench %s: %s\n", k, fp[k])
				}
				fmt.Fprintf(&b, "%s%s\n", abfile.BootIDLine, boot.ID)
				for _, u := range slices.Sorted(maps.Keys(s.better)) {
					fmt.Fprintf(&b, "Unit %s better=%s\n", u, map[int]string{1: "higher", -1: "lower"}[s.better[u]])
				}
				fmt.Fprintf(&b, "goos: linux\ngoarch: amd64\npkg: %s\ncpu: AMD EPYC\n", pkg)
			}
			for _, res := range boot.Rows[i] {
				fmt.Fprintf(&b, "Benchmark%s \t%d", r.Name, res.Iters)
				for j, u := range r.Units {
					fmt.Fprintf(&b, "\t%s %s", strconv.FormatFloat(res.Values[j], 'g', 6, 64), u)
				}
				b.WriteString("\n")
			}
		}
		if pkg != "" {
			fmt.Fprintf(&b, "PASS\nok  \t%s\t1.0s\n", pkg)
		}
	}
	return b.String()
}

// Files draws a comparison and writes it as two result files in a
// test's temporary directory, with fingerprint lines fp[0] and fp[1].
func (s *Suite) Files(t testing.TB, rng *rand.Rand, d Comparison, fp [2]map[string]string) (oldPath, newPath string) {
	t.Helper()
	old, new := s.Draw(rng, d)
	return write(t, "old.txt", []byte(s.Text(old, fp[0]))), write(t, "new.txt", []byte(s.Text(new, fp[1])))
}

// Parallel runs f(i) for i < n on two goroutines, for simulations whose
// draws each seed their own generator from i.
func Parallel(n int, f func(i int)) {
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Go(func() {
			for i := w; i < n; i += 2 {
				f(i)
			}
		})
	}
	wg.Wait()
}
