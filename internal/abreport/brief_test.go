//go:build linux

package abreport

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kbench/kbench/internal/abstat"
	"github.com/kbench/kbench/internal/abstat/sim"
)

// suiteAB is a whole-suite A/B, 3+3 boots at -count=10 drawn from the
// suite's real run, whose one changed row is 30% slower on B (a quiet
// row, which 3+3 boots call worse among the suite's); A and B differ in kernel
// release and cmdline as two kernels' runs do.
func suiteAB(t *testing.T) (*abstat.Report, string) {
	s := sim.LoadSuite(t)
	const changed = "sockfdbench Sockfd/shape=stress-ng/kind=unix/fds=1/run=serial/mm=separate/cpu=any-2"
	cmdline := "console=ttyS0 quiet reboot=k panic=1 nomodule random.trust_cpu=1 swiotlb=noforce psi=1 " +
		"mitigations=auto,no_guest_host,no_guest_guest page_reporting.page_reporting_order=11"
	fp := [2]map[string]string{
		{"kernel.release": "6.17.0-kbench", "kernel.cmdline": cmdline, "cpu.microcode": "0x1000065"},
		{"kernel.release": "6.18.0-rc3-kbench-00123-gdeadbeef", "kernel.cmdline": cmdline + " nosmt", "cpu.microcode": "0x1000065"},
	}
	a, b := s.Files(t, rand.New(rand.NewPCG(27, 6)), sim.Comparison{Boots: [2]int{3, 3}, Count: 10, Between: 0.35,
		Change: map[string]float64{changed: 0.3}}, fp)
	r, err := abstat.Compare(a, b, abstat.DefaultOptions)
	if err != nil {
		t.Fatal(err)
	}
	return r, strings.TrimPrefix(changed, "sockfdbench ")
}

// TestBriefWholeSuite: the brief form of a whole-suite A/B with one
// changed row fits 80 columns and 40 lines (issue 27), and says what a
// reviewer needs: the setup lines that differ, the row with its change,
// interval and q, the counters that moved, the underpowered ones, and
// the summary with what chance alone gives.
func TestBriefWholeSuite(t *testing.T) {
	r, changed := suiteAB(t)
	if n := r.Count(abstat.Worse); n != 1 {
		t.Fatalf("%d rows worse, want the changed one (the test's premise)", n)
	}
	var b bytes.Buffer
	if err := WriteBrief(&b, New(r, nil, nil)); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	rows := len(sim.LoadSuite(t).Rows)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	t.Logf("%d lines:\n%s", len(lines), out)
	if len(lines) > 40 {
		t.Errorf("%d lines, want at most 40", len(lines))
	}
	for _, l := range lines {
		if n := utf8.RuneCountInString(l); n > briefWidth {
			t.Errorf("line of %d columns (max %d): %q", n, briefWidth, l)
		}
	}
	for _, want := range []string{
		"boots: 3+3, boots are the samples",
		"setup: 2 lines differ",
		"kernel.release: 6.17.0-kbench -> 6.18.0-rc3-kbench-00123-gdeadbeef",
		"kernel.cmdline: +nosmt",
		fmt.Sprintf("changed: 1 of %d rows (q <= 0.05, change at least 5%%)", rows),
		"  worse   sockfdbench\n          " + fitMiddle(changed, briefWidth-10) + "\n",
		"sec/op +", "q=0.0", "rates: fds/s -", ", ops/s -",
		"counters: cpu-sec/op +",
		"underpowered: ",
		fmt.Sprintf("%d rows: 1 worse, ", rows),
		"chance: ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("brief form lacks %q", want)
		}
	}
}

// TestTextWholeSuite: the full text report of the same A/B keeps to 100
// columns and lists every row once in the summary's count.
func TestTextWholeSuite(t *testing.T) {
	r, _ := suiteAB(t)
	var b bytes.Buffer
	if err := WriteText(&b, New(r, nil, nil)); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(b.String(), "\n") {
		if n := utf8.RuneCountInString(l); n > Width {
			t.Errorf("line of %d columns (max %d): %q", n, Width, l)
		}
	}
	rows := len(sim.LoadSuite(t).Rows)
	if !strings.Contains(b.String(), fmt.Sprintf("\n%d rows: 1 worse, 0 better, 0 changed, ", rows)) {
		t.Errorf("summary does not count %d rows with 1 worse:\n%s", rows, b.String())
	}
}

// TestPrintable: what a result file holds that a terminal would act on
// does not reach the report.
func TestPrintable(t *testing.T) {
	if got := printable("a\x1b[2Jb\tc\x00\n\u0085é"); got != "a?[2Jb c?\n?é" {
		t.Errorf("printable: %q", got)
	}
}

// TestBriefManyChanges: with many rows changed, a package failed on one
// side and many setup lines different, the brief form still fits 80
// columns and 40 lines, counting what it does not list.
func TestBriefManyChanges(t *testing.T) {
	s := sim.LoadSuite(t)
	change := map[string]float64{}
	for _, r := range s.Rows[:30] {
		change[r.Key()] = 1
	}
	fp := [2]map[string]string{{}, {}}
	for i := range 12 {
		k := fmt.Sprintf("setting.%02d", i)
		fp[0][k], fp[1][k] = "old value "+strings.Repeat("x", 90), "new value"
	}
	a, b := s.Files(t, rand.New(rand.NewPCG(27, 7)), sim.Comparison{Boots: [2]int{3, 3}, Count: 10, Between: 0.35, Change: change}, fp)
	data, err := os.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	// The new side's redisbench binary failed, in every boot.
	broken := strings.ReplaceAll(string(data), "ok  \tgithub.com/kbench/kbench/redisbench", "FAIL\tgithub.com/kbench/kbench/redisbench")
	if err := os.WriteFile(b, []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := abstat.Compare(a, b, abstat.DefaultOptions)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := WriteBrief(&out, New(r, nil, nil)); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	t.Logf("%d lines:\n%s", len(lines), out.String())
	if len(lines) > 40 {
		t.Errorf("%d lines, want at most 40", len(lines))
	}
	for _, l := range lines {
		if n := utf8.RuneCountInString(l); n > briefWidth {
			t.Errorf("line of %d columns (max %d): %q", n, briefWidth, l)
		}
	}
	for _, want := range []string{"... 7 more (-format text lists them)", "more rows (-format text lists them)", "1 more failure (-format text lists them)", "other failures: not \"nothing worse\""} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("brief form lacks %q", want)
		}
	}
}
