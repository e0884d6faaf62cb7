//go:build linux

package main

import (
	"bytes"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/abstat/sim"
)

// TestPlot: -plot draws an overview and one picture per row that changed
// or is underpowered, as PNG and SVG, and index.md names each of them.
func TestPlot(t *testing.T) {
	old := sim.Assemble(t, "old.txt", sim.BootFiles("a", sim.BootsA, nil)...)
	nw := sim.Assemble(t, "new.txt", sim.BootFiles("b", sim.BootsB, nil)...)
	same := sim.Assemble(t, "same.txt", sim.BootFiles("a2", sim.BootsB, []float64{1, 1.3, 1})...)
	for _, c := range []struct {
		name     string
		old, new string
		rows     int // pictures of rows
		code     int
	}{
		{"worse", old, nw, 2, 1},      // sec/op and loops/s, worse
		{"odd boot", old, same, 2, 0}, // underpowered: one boot of A' 30% slower
		{"failed", sim.File(t, "fail-old.txt"), sim.File(t, "fail-new.txt"), 1, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "plots")
			var out, errOut bytes.Buffer
			if code := run([]string{"-plot", dir, c.old, c.new}, &out, &errOut); code != c.code {
				t.Fatalf("exit %d, want %d: %s", code, c.code, errOut.String())
			}
			index, err := os.ReadFile(filepath.Join(dir, "index.md"))
			if err != nil {
				t.Fatal(err)
			}
			pngs, _ := filepath.Glob(filepath.Join(dir, "row-*.png"))
			svgs, _ := filepath.Glob(filepath.Join(dir, "row-*.svg"))
			if len(pngs) != c.rows || len(svgs) != c.rows {
				t.Errorf("%d PNG and %d SVG row pictures, want %d", len(pngs), len(svgs), c.rows)
			}
			for _, p := range append(pngs, filepath.Join(dir, "overview.png")) {
				f, err := os.Open(p)
				if err != nil {
					t.Fatal(err)
				}
				img, err := png.Decode(f)
				f.Close()
				if err != nil {
					t.Errorf("%s: %v", p, err)
					continue
				}
				if b := img.Bounds(); b.Dx() < 300 || b.Dy() < 150 {
					t.Errorf("%s: %v, too small to read", p, b)
				}
				name := filepath.Base(p)
				if !strings.Contains(string(index), "("+name+")") {
					t.Errorf("index.md does not name %s:\n%s", name, index)
				}
				svg, err := os.ReadFile(strings.TrimSuffix(p, ".png") + ".svg")
				if err != nil || !bytes.Contains(svg, []byte("<svg")) {
					t.Errorf("%s: no SVG beside it (%v)", p, err)
				}
			}
		})
	}
	if code := run([]string{"-plot", "/proc/no/such/dir", old, nw}, &bytes.Buffer{}, &bytes.Buffer{}); code != 2 {
		t.Errorf("unwritable -plot dir: exit %d, want 2", code)
	}
}

// TestPlotDegenerate: -plot draws the overview where no row is compared
// (a log axis without data has no range) and where a row's interval
// reaches past -100% (a lower-is-better row's gain then has no upper
// end), as it draws any other; it panicked on both.
func TestPlotDegenerate(t *testing.T) {
	old := sim.Assemble(t, "old.txt", sim.BootFiles("a", sim.BootsA, nil)...)
	other := sim.BootFiles("b", sim.BootsB, nil)
	for i := range other {
		other[i].Edit = func(s string) string { return strings.ReplaceAll(s, "BenchmarkSyscall/", "BenchmarkOther/") }
	}
	s := sim.LoadSuite(t)
	oneOld, oneNew := s.Files(t, rand.New(rand.NewPCG(27, 600)), sim.Comparison{Boots: [2]int{1, 1}, Count: 3, Between: 1}, [2]map[string]string{})
	for _, c := range []struct{ name, old, new string }{
		{"no compared rows", old, sim.Assemble(t, "new.txt", other...)},
		{"one boot a side", oneOld, oneNew},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "plots")
			var errOut bytes.Buffer
			if code := run([]string{"-plot", dir, c.old, c.new}, &bytes.Buffer{}, &errOut); code == 2 {
				t.Fatalf("exit 2: %s", errOut.String())
			}
			for _, f := range []string{"overview.png", "overview.svg", "index.md"} {
				if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
					t.Error(err)
				}
			}
		})
	}
}
