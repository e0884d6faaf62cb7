//go:build linux

package main

import (
	"bytes"
	"html"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/abstat/sim"
)

// TestPlot: -plot draws one picture per row that changed or is
// underpowered, as SVG, each with its caption as its title.
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
		{"failed", sim.File(t, "fail-old.txt"), sim.File(t, "fail-new.txt"), 0, 1}, // per sample: ~, no row moved
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "plots")
			var out, errOut bytes.Buffer
			if code := run([]string{"-plot", dir, c.old, c.new}, &out, &errOut); code != c.code {
				t.Fatalf("exit %d, want %d: %s", code, c.code, errOut.String())
			}
			svgs, _ := filepath.Glob(filepath.Join(dir, "row-*.svg"))
			if len(svgs) != c.rows {
				t.Errorf("%d row pictures, want %d", len(svgs), c.rows)
			}
			for _, p := range svgs {
				svg, err := os.ReadFile(p)
				// Its caption is its title: a row's names the row and its verdict.
				_, title, _ := strings.Cut(string(svg), "<title>")
				title, _, _ = strings.Cut(title, "</title>")
				want := regexp.MustCompile(`^\S+ \S+ \S+: \S+\. Old `) // the row, its unit and verdict
				if err != nil || !bytes.Contains(svg, []byte("<svg")) || !want.MatchString(html.UnescapeString(title)) {
					t.Errorf("%s: %v, title %q", p, err, title)
				}
			}
		})
	}
	if code := run([]string{"-plot", "/proc/no/such/dir", old, nw}, &bytes.Buffer{}, &bytes.Buffer{}); code != 2 {
		t.Errorf("unwritable -plot dir: exit %d, want 2", code)
	}
}

// TestPlotDegenerate: -plot draws where no row is compared and where a
// row's interval reaches past -100%, as it draws any other (the
// overview it drew until issue 45 dropped it panicked on both).
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
			if _, err := os.Stat(dir); err != nil {
				t.Error(err)
			}
		})
	}
}
