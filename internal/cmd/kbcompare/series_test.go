//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/abreport"
	"github.com/kbench/kbench/internal/abstat/sim"
)

// seriesFiles assembles four kernels' files from the Syscall runs, three
// boots each, kernels from changeAt on 30% slower (none: 4), named
// 6.12.K.txt.
func seriesFiles(t *testing.T, changeAt int) []string {
	t.Helper()
	var paths []string
	for k := range 4 {
		var boots []string
		for b := range 3 {
			boots = append(boots, fmt.Sprintf("%08x-0000-4000-8000-%012d", k+1, b+1))
		}
		f := 1.0
		if k >= changeAt {
			f = 1.3
		}
		prefix := []string{"a", "a2"}[k%2]
		paths = append(paths, sim.Assemble(t, fmt.Sprintf("6.12.%d.txt", 100+k), sim.BootFiles(prefix, boots, []float64{f, f, f})...))
	}
	return paths
}

func TestSeriesText(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(append([]string{"-series"}, seriesFiles(t, 2)...), &out, &errOut); code != 1 {
		t.Fatalf("a 30%% slower change: exit %d, want 1: %s", code, errOut.String())
	}
	text := out.String()
	for _, want := range []string{"4 kernels", "1 6.12.100: ", "seccompbench " + sim.SyscallRow + " (sec/op)", "between 6.12.101 and 6.12.102: +30.",
		"worse  p="} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q:\n%s", want, text)
		}
	}
	out.Reset()
	if code := run(append([]string{"-series"}, seriesFiles(t, 4)...), &out, &errOut); code != 0 {
		t.Fatalf("no change: exit %d, want 0: %s", code, errOut.String())
	}
	if text := out.String(); !strings.Contains(text, "no row changed") || !strings.Contains(text, "1 row without a change") || !strings.Contains(text, "mde ") {
		t.Errorf("no change: report\n%s", text)
	}
}

func TestSeriesJSONReport(t *testing.T) {
	files := seriesFiles(t, 2)
	var out, errOut bytes.Buffer
	if code := run(append([]string{"-series", "-format", "json"}, files...), &out, &errOut); code != 1 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var m abreport.SeriesReport
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	if m.Schema != "kbcompare-series/1" || len(m.Kernels) != 4 || m.Kernels[3].Label != "6.12.103" || len(m.Rows) != 1 {
		t.Fatalf("json: %+v", m)
	}
	r := m.Rows[0]
	if len(r.Changes) != 1 || r.Changes[0].After != 1 || r.Changes[0].From != "6.12.101" || r.Changes[0].Verdict != "worse" ||
		r.Changes[0].Ratio < 1.25 || r.Changes[0].Ratio > 1.35 || len(r.Boots) != 4 || r.Boots[0] != 3 || m.Summary.Changed != 1 || m.Summary.Exit != 1 {
		t.Errorf("json row: %+v", r)
	}
}

func TestSeriesPlot(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "plots")
	var out, errOut bytes.Buffer
	if code := run(append([]string{"-series", "-plot", dir}, seriesFiles(t, 2)...), &out, &errOut); code != 1 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	svgs, _ := filepath.Glob(filepath.Join(dir, "series-*.svg"))
	var svg []byte
	if len(svgs) == 1 {
		svg, _ = os.ReadFile(svgs[0])
	}
	if len(svgs) != 1 || !strings.Contains(string(svg), "<title>") || !strings.Contains(string(svg), "between 6.12.101 and 6.12.102") {
		t.Errorf("%d SVG: %v\n%.600s", len(svgs), svgs, svg)
	}
}

func TestSeriesFlags(t *testing.T) {
	files := seriesFiles(t, 4)
	for _, args := range [][]string{
		append([]string{"-series", "-format", "brief"}, files...),
		append([]string{"-series", "-target", "3%"}, files...),
		append([]string{"-series", "-plan"}, files...),
		{"-series", files[0]},
		{"-series", files[0], "/no/such/file.txt"},
	} {
		var errOut bytes.Buffer
		if code := run(args, &bytes.Buffer{}, &errOut); code != 2 || errOut.Len() == 0 {
			t.Errorf("%v: exit %d (%q), want 2 with a message", args[:3], code, errOut.String())
		}
	}
}
