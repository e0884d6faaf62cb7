//go:build linux

package main

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"strconv"
	"testing"

	"golang.org/x/perf/benchmath"

	"github.com/kbench/kbench/internal/abstat"
)

// TestAgreesWithBenchstat runs the pinned benchstat (`go tool benchstat
// -format csv`, which prints centers at full precision) on synthetic
// files and checks that kbcompare's centers, ranges, p-values, sample
// counts and significant changes are the ones it prints.
func TestAgreesWithBenchstat(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	noisy := func(base, spread float64) func(int) float64 {
		return func(int) float64 { return base * (1 + spread*(rng.Float64()-0.5)) }
	}
	steps := func(vals ...float64) func(int) float64 { // ties and exact repeats
		return func(i int) float64 { return vals[i%len(vals)] }
	}
	units := []string{"Unit loops/s better=higher"}
	old := resultFile{units: units, lines: concat(
		samples("Syscall/work=getpid/filters=0-2", 10, "ns/op", noisy(160, 0.2), "loops/s", noisy(6e6, 0.2)),
		samples("Syscall/work=getpid/filters=0-4", 10, "ns/op", noisy(160, 0.2)),
		samples("Syscall/work=mix/filters=32-2", 10, "ns/op", noisy(2000, 0.1), "B/op", steps(0, 0, 0, 16)),
		samples("Load/loaders=1-2", 8, "ns/op", noisy(5e4, 0.3), "allocs/op", steps(3, 3, 4)),
		samples("Few-2", 4, "ns/op", noisy(100, 0.1)),
		samples("Gone-2", 6, "ns/op", noisy(100, 0.1)),
	)}
	nw := resultFile{units: units, lines: concat(
		samples("Syscall/work=getpid/filters=0-2", 10, "ns/op", noisy(800, 0.2), "loops/s", noisy(1.2e6, 0.2)),
		samples("Syscall/work=getpid/filters=0-4", 9, "ns/op", noisy(165, 0.2)),
		samples("Syscall/work=mix/filters=32-2", 10, "ns/op", noisy(1900, 0.1), "B/op", steps(0, 0, 16)),
		samples("Load/loaders=1-2", 10, "ns/op", noisy(5e4, 0.3), "allocs/op", steps(3, 3, 4)),
		samples("Few-2", 4, "ns/op", noisy(130, 0.1)),
		samples("Fresh-2", 6, "ns/op", noisy(100, 0.1)),
	)}
	oldPath, newPath := old.write(t, "old.txt"), nw.write(t, "new.txt")

	r, err := abstat.Compare(oldPath, newPath, defaults)
	if err != nil {
		t.Fatal(err)
	}
	stat := benchstatCSV(t, oldPath, newPath)
	checked := 0
	for _, tab := range r.Tables {
		for _, row := range tab.Rows {
			key := tab.Unit + " " + row.Name
			want, ok := stat[key]
			if !ok {
				t.Errorf("benchstat has no row %q", key)
				continue
			}
			delete(stat, key)
			got := make([]string, 6)
			for i, s := range row.Sides {
				if s != nil {
					got[2*i], got[2*i+1] = fmt.Sprint(s.Center), benchmath.Summary{Center: s.Center, Lo: s.Lo, Hi: s.Hi}.PctRangeString()
				}
			}
			if row.Test != "" {
				got[4], got[5] = "~", benchmath.Comparison{P: row.P, N1: row.Sides[0].N, N2: row.Sides[1].N}.String()
				if !(row.P > defaults.Alpha) {
					got[4] = fmt.Sprintf("%+.2f%%", 100*row.Change)
				}
			}
			for i, name := range []string{"old center", "old range", "new center", "new range", "change", "p and n"} {
				if got[i] != want[i] {
					t.Errorf("%s: %s %q, benchstat %q", key, name, got[i], want[i])
				}
			}
			checked++
		}
	}
	for key := range stat {
		t.Errorf("benchstat row %q missing from kbcompare", key)
	}
	// 6 sec/op rows, loops/s, B/op, allocs/op.
	if checked != 10 {
		t.Errorf("compared %d rows with benchstat, want 10", checked)
	}
}

// benchstatCSV runs `go tool benchstat -format csv` and returns, per
// "unit name", old center, old range, new center, new range, change and
// "p=... n=...", "" where benchstat prints nothing.
func benchstatCSV(t *testing.T, oldPath, newPath string) map[string][]string {
	t.Helper()
	// go test puts its own toolchain on PATH; under go test -exec vmexec,
	// or a test binary copied elsewhere, there may be none.
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command on PATH: this test runs the pinned benchstat with `go tool benchstat` (install Go, or run it with go test)")
	}
	cmd := exec.Command(goCmd, "tool", "benchstat", "-format", "csv", oldPath, newPath)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go tool benchstat: %v\n%s", err, stderr.String())
	}
	cr := csv.NewReader(&stdout)
	cr.FieldsPerRecord = -1
	recs, err := cr.ReadAll()
	if err != nil {
		t.Fatalf("parsing benchstat's CSV: %v\n%s", err, stdout.String())
	}
	rows := map[string][]string{}
	unit := ""
	for _, rec := range recs {
		switch {
		case len(rec) >= 3 && rec[2] == "CI":
			unit = rec[1]
		case unit != "" && len(rec) >= 3 && rec[0] != "" && rec[0] != "geomean":
			cells := make([]string, 6)
			copy(cells, rec[1:])
			for _, c := range []string{cells[0], cells[2]} {
				if _, err := strconv.ParseFloat(c, 64); c != "" && err != nil {
					t.Fatalf("unexpected benchstat CSV row %q", rec)
				}
			}
			rows[unit+" "+rec[0]] = cells
		}
	}
	if len(rows) == 0 {
		t.Fatalf("no rows in benchstat's CSV:\n%s", stdout.String())
	}
	return rows
}
