//go:build linux

package abreport

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kbench/kbench/internal/abseries"
	"github.com/kbench/kbench/internal/abstat"
)

// The series text: each change between the two kernels' labels, worse
// or better by the unit's direction; the rows without one with their
// mde; an untested row with the label of the kernel at fault; no line
// past Width, long names wrapped.
func TestSeriesText(t *testing.T) {
	long := "Sockfd/shape=stress-ng/kind=file/fds=253/run=parallel/mm=separate/cpu=any/and-a-long-tail-of-configuration-2"
	s := &abseries.Series{
		Files:  []string{"a/6.12.100.txt", "a/6.12.107.txt", "a/6.12.113.txt"},
		Labels: []string{"6.12.100", "6.12.107", "6.12.113"},
		Rows: []abseries.SeriesRow{
			{Table: &abstat.Table{Pkg: "seccompbench", Unit: "sec/op", Better: -1}, Name: "Load-2", Medians: [][]float64{{1, 1}, {1, 1}, {2, 2}}},
			{Table: &abstat.Table{Pkg: "redisbench", Unit: "req/s", Better: 1}, Name: "Recipe-2", Medians: [][]float64{{1, 1}, {2, 2}, {2, 2}}},
			{Table: &abstat.Table{Pkg: "sockfdbench", Unit: "sec/op", Better: -1}, Name: long, Medians: [][]float64{{1, 1.1}, {1, 1.1}, {1, 1.1}}},
			{Table: &abstat.Table{Pkg: "netbench", Unit: "sec/op", Better: -1}, Name: "TCPRR-2", Medians: [][]float64{{1, 1.1}, {1}, {1, 1.1}}},
		},
	}
	nan := math.NaN()
	rep := NewSeries(s, []abseries.RowResult{
		{Changes: []abseries.Change{{After: 1, Ratio: 1.10, Lo: 1.05, Hi: 1.15, P: 1e-4, Q: 4e-4}}, Kernel: -1},
		{Changes: []abseries.Change{{After: 0, Ratio: 1.20, Lo: 1.1, Hi: 1.3, P: 1e-4, Q: 4e-4}}, Kernel: -1},
		{MDE: 0.081, MDEEnd: 0.12, Sigma: 0.03, P: 0.5, Q: 1, Kernel: -1},
		{Untested: "1 boots: want at least 2", Kernel: 1, P: nan, Q: nan, MDE: nan, MDEEnd: nan, Sigma: nan},
	}, abseries.DefaultOptions)
	var b bytes.Buffer
	if err := WriteSeriesText(&b, rep); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	for _, want := range []string{
		"kbcompare -series: 3 kernels", "  2 6.12.107: a/6.12.107.txt",
		"seccompbench Load-2 (sec/op)\n  between 6.12.107 and 6.12.113: +10.00% [+5.00%, +15.00%] worse  p=0.0001 q=0.0004",
		"redisbench Recipe-2 (req/s)\n  between 6.12.100 and 6.12.107: +20.00% [+10.00%, +30.00%] better",
		"1 row without a change", "mde 8.1% / 12%  (boot medians ±3.0%)",
		"1 row untested:\n  netbench TCPRR-2: 6.12.107: 1 boots: want at least 2",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q:\n%s", want, text)
		}
	}
	for _, l := range strings.Split(text, "\n") {
		if utf8.RuneCountInString(l) > Width {
			t.Errorf("line of %d columns, want at most %d: %q", utf8.RuneCountInString(l), Width, l)
		}
	}
	if rep.Summary.Changed != 2 || changeWord(0.9, -1) != "better" || changeWord(1.1, 0) != "changed" {
		t.Errorf("Changed %d, changeWord wrong", rep.Summary.Changed)
	}
}
