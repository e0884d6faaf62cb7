//go:build linux

package abreport

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/abplan"
	"github.com/kbench/kbench/internal/abseries"
	"github.com/kbench/kbench/internal/abstat"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/*.golden from the code as it is")

// golden compares got with testdata/golden/name, or with -update
// writes it.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -run TestGolden -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs; got:\n%s", path, got)
	}
}

// plannedRun is kbab's report of a planned run of testdata/golden's
// old.txt and new.txt (3 boots a side, the pilot's): a -target of 20%
// whose budget the pilot has spent, so that its row is undecided, over
// budget; and a perf-profile section that could not be made. design is
// its design (WriteDesign), before the pilot and after.
func plannedRun(t *testing.T) (run, design []byte) {
	old, nw := filepath.Join("testdata", "golden", "old.txt"), filepath.Join("testdata", "golden", "new.txt")
	pilot, err := abstat.Compare(old, nw, abstat.DefaultOptions)
	if err != nil {
		t.Fatal(err)
	}
	o := abplan.DefaultOptions(0.2)
	o.Pilot, o.Budget = 3, 60
	d, err := abplan.New(o)
	if err != nil {
		t.Fatal(err)
	}
	var des bytes.Buffer
	if err := WriteDesign(&des, d); err != nil {
		t.Fatal(err)
	}
	d.Plan(abplan.RowsOf(pilot), map[string]float64{"github.com/kbench/kbench/seccompbench": 10}, 120)
	ro := abstat.DefaultOptions
	ro.Threshold, ro.Design, ro.Target = o.Threshold, d.TestRow, o.Target
	rep, err := abstat.Compare(old, nw, ro)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	err = WriteText(&b, New(rep, nil, &RunNotes{Design: d, PlanFile: "out/plan.txt",
		ProfileDirs: [2]string{"out/profiles/A", "out/profiles/B"}, ProfileErr: errors.New("no profile in out/profiles/A")}))
	if err != nil {
		t.Fatal(err)
	}
	des.WriteString("-- planned --\n")
	if err := WriteDesign(&des, d); err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), des.Bytes()
}

// TestGolden checks kbab's reports, which kbcompare does not print:
// the run report of a planned run (WriteText with RunNotes) and its
// design (WriteDesign), a bisection's (WriteBisect)
// that ends at an image, one that cannot tell and one not one step, and a series'
// (WriteSeriesText with a kbab run) of testdata/golden's four kernels.
func TestGolden(t *testing.T) {
	run, design := plannedRun(t)
	golden(t, "run.golden", run)
	golden(t, "design.golden", design)

	kernels := []Kernel{{"good", "bzImage-good"}, {"i1", "bzImage-1"}, {"i2", "bzImage-2"}, {"i3", "bzImage-3"}, {"bad", "bzImage-bad"}}
	b := BisectRun{List: "kernels.txt", Row: "Syscall", Pkg: "seccompbench", RowName: "Syscall/work=getpid/kind=cached/filters=0-2",
		Kernels: kernels, Target: 0.05, ConfirmBoots: 12, Verdict: abstat.Worse, Change: 0.12, Unit: "sec/op",
		Search: abseries.SearchResult{FirstBad: 1, Lo: 0, Hi: 1, Boots: 27, Done: true, Steps: []abseries.Step{
			{Image: 1, Rounds: 3, Decision: abseries.LikeBad, Good: 1.01e-7, ImageCenter: 1.13e-7, Bad: 1.12e-7, Position: 1.09},
			{Image: 0, Rounds: 6, Decision: abseries.LikeGood, Good: 1.00e-7, ImageCenter: 1.01e-7, Bad: 1.12e-7, Position: 0.08}}},
		Looks: []int{3, 6, 12}, Level: 0.0095, Opts: abseries.DefaultSearchOptions, BootsInAll: 39, ConfirmReport: run}
	var out bytes.Buffer
	if err := WriteBisect(&out, b); err != nil {
		t.Fatal(err)
	}
	golden(t, "bisect-found.golden", out.Bytes())
	for name, last := range map[string]abseries.Step{
		"undecided": {Image: 2, Rounds: 24, Decision: abseries.CannotTell, Good: 1.00e-7, ImageCenter: 1.07e-7, Bad: 1.12e-7, Position: 0.58},
		"between":   {Image: 2, Rounds: 6, Decision: abseries.Between, Good: 1.00e-7, ImageCenter: 1.06e-7, Bad: 1.12e-7, Position: 0.5},
	} {
		b.Search = abseries.SearchResult{FirstBad: -1, Lo: 1, Hi: 3, Boots: 90, Steps: []abseries.Step{
			{Image: 1, Rounds: 6, Decision: abseries.LikeGood, Good: 1.00e-7, ImageCenter: 0.99e-7, Bad: 1.12e-7, Position: -0.08}, last}}
		out.Reset()
		if err := WriteBisect(&out, b); err != nil {
			t.Fatal(err)
		}
		golden(t, "bisect-"+name+".golden", out.Bytes())
	}
	for _, v := range []abstat.Verdict{abstat.Undecided, abstat.Same} {
		b.Verdict = v
		out.Reset()
		if err := WriteBisect(&out, b); err != nil {
			t.Fatal(err)
		}
		golden(t, "bisect-"+map[abstat.Verdict]string{abstat.Undecided: "unconfirmed", abstat.Same: "same"}[v]+".golden", out.Bytes())
	}

	files, err := filepath.Glob(filepath.Join("testdata", "golden", "series", "*.txt"))
	if err != nil || len(files) != 4 {
		t.Fatalf("series files %v: %v", files, err)
	}
	labels := []string{"k1", "k2", "k3", "k4"}
	s, err := abseries.Read(files, labels)
	if err != nil {
		t.Fatal(err)
	}
	rep := NewSeries(s, abseries.Detect(s.Medians(), abseries.DefaultOptions), abseries.DefaultOptions)
	var ks []Kernel
	for _, l := range labels {
		ks = append(ks, Kernel{l, "bzImage " + l})
	}
	out.Reset()
	rep.Run = &SeriesRun{List: "kernels.txt", Boots: 3, Kernels: ks, Pictures: "pictures/"}
	if err := WriteSeriesText(&out, rep); err != nil {
		t.Fatal(err)
	}
	golden(t, "series-run.golden", out.Bytes())
}

// TestGeomeanNonFinite checks that a geomean with no finite value (rows
// at 1e-300 and 1e300 overflow it) is written as null, not an error.
func TestGeomeanNonFinite(t *testing.T) {
	inf := Num(math.Inf(1))
	b, err := json.Marshal(Geomean{Unit: "sec/op", Old: 1, New: inf, Change: Num(math.NaN())})
	if err != nil {
		t.Fatal(err)
	}
	if want := `"old":1,"new":null,"change":null`; !strings.Contains(string(b), want) {
		t.Errorf("geomean JSON %s, want it to hold %s", b, want)
	}
}
