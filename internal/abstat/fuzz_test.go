//go:build linux

package abstat

import (
	"math"
	"os"
	"testing"

	"github.com/kbench/kbench/internal/abfile"
	"github.com/kbench/kbench/internal/abstat/sim"
)

// Bounded time: the fuzzing engine fails an input that runs past 10
// seconds (the worker panics, and the input is kept as a crasher); the
// reader and the statistics take milliseconds on what it makes. A NaN
// sample made kbcompare spin until killed before its reader refused it.

// FuzzBoots: any file, compared with a real three-boot file and with
// itself, is judged without a panic in bounded time: the fingerprint and
// setup lines, boot grouping, failures, skips and pulses it holds give
// a report whose boots, samples and p- and q-values add up, or an error
// that names the file and line.
func FuzzBoots(f *testing.F) {
	realPath := sim.Assemble(f, "real.txt", sim.BootFiles("a", sim.BootsA, nil)...)
	real, err := os.ReadFile(realPath)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		const p = "in.txt"
		for _, pair := range [][2][]byte{{real, data}, {data, data}} {
			var r *Report
			files, units, err := abfile.ReadData([]string{"real.txt", p}, pair[:])
			if err == nil {
				r = compareFiles(files, units, defaults)
			}
			if err != nil {
				if !sim.ErrorForm(p).MatchString(err.Error()) {
					t.Fatalf("error %q does not name the file and line and what was wanted", err)
				}
				return
			}
			checkReport(t, r)
		}
	})
}

// checkReport checks what holds for every report.
func checkReport(t *testing.T, r *Report) {
	t.Helper()
	if r.BootMode != (r.Boots[0] >= MinBoots && r.Boots[1] >= MinBoots) || r.Boots[0] < 1 || r.Boots[1] < 1 {
		t.Fatalf("boots %v, boot mode %v", r.Boots, r.BootMode)
	}
	if r.Family > rows(r) || r.Nominal > r.Family {
		t.Fatalf("family %d, nominal %d, rows %d", r.Family, r.Nominal, rows(r))
	}
	seen := map[string]bool{}
	for _, d := range r.Setup {
		if seen[d.Key] || d.Old == d.New {
			t.Fatalf("setup line %q listed twice or equal", d.Key)
		}
		seen[d.Key] = true
	}
	unit := func(x float64) bool { return math.IsNaN(x) || 0 <= x && x <= 1 }
	for _, tab := range r.Tables {
		for _, row := range tab.Rows {
			if row.Verdict == "" || !unit(row.P) || !unit(row.Q) {
				t.Fatalf("%s %s: verdict %q p %v q %v", tab.Unit, row.Name, row.Verdict, row.P, row.Q)
			}
			for side, s := range row.Samples {
				if s == nil {
					continue
				}
				if len(s.IDs) != len(s.Values) || len(s.Iters) != len(s.Values) || len(s.IDs) > r.Boots[side] {
					t.Fatalf("%s %s: %d boots of %d values, file has %d boots", tab.Unit, row.Name, len(s.IDs), len(s.Values), r.Boots[side])
				}
			}
			if b := row.boot; b != nil && (len(b.med[0]) != row.Samples[0].Boots() || len(b.med[1]) != row.Samples[1].Boots()) {
				t.Fatalf("%s %s: Welch on %d+%d boots of %d+%d", tab.Unit, row.Name, len(b.med[0]), len(b.med[1]), row.Samples[0].Boots(), row.Samples[1].Boots())
			}
		}
	}
}
