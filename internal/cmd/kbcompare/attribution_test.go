//go:build linux

package main

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kbench/kbench/internal/abreport"
	"github.com/kbench/kbench/internal/abstat"
)

var counterUnits = []string{"Unit cpu-ns/op better=lower", "Unit cs/op better=lower", "Unit faults/op better=lower",
	"Unit softirq-timer/op better=lower", "Unit loops/s better=higher"}

// attrFiles: the op takes twice as long; its CPU time doubles; context
// switches come at the same pace per second, so per op they double too;
// page faults quadruple per op (double per second): the op's own; timer
// softirqs stay the same per op.
func attrFiles(t *testing.T) (string, string) {
	old := resultFile{units: counterUnits, lines: samples("Op-2", 10, "ns/op", around(100, 0.01),
		"cpu-ns/op", around(90, 0.01), "cs/op", around(0.001, 0.01), "faults/op", around(2, 0.01),
		"softirq-timer/op", around(0.5, 0.01), "loops/s", around(1e7, 0.01))}
	nw := resultFile{units: counterUnits, lines: samples("Op-2", 10, "ns/op", around(200, 0.01),
		"cpu-ns/op", around(180, 0.01), "cs/op", around(0.002, 0.01), "faults/op", around(8, 0.01),
		"softirq-timer/op", around(0.5, 0.01), "loops/s", around(0.5e7, 0.01))}
	return old.write(t, "old.txt"), nw.write(t, "new.txt")
}

func TestAttributionGroups(t *testing.T) {
	oldPath, newPath := attrFiles(t)
	r, err := abstat.Compare(oldPath, newPath, defaults)
	if err != nil {
		t.Fatal(err)
	}
	for _, tab := range r.Tables {
		if tab.Unit != "sec/op" && tab.Unit != "loops/s" {
			t.Errorf("counter unit %s among the headline tables", tab.Unit)
		}
	}
	// One row, worse in its sec/op (loops/s is evidence beside it), and
	// counters never count.
	if got := r.Count(abstat.Worse); got != 1 {
		t.Errorf("%d worse rows, want 1 (Op-2, in sec/op; counters never count)", got)
	}
	own, paced, same := r.Attribution.For("fakebench", "", "Op-2")
	var ownUnits, pacedUnits []string
	for _, l := range own {
		ownUnits = append(ownUnits, l.Unit)
	}
	for _, l := range paced {
		pacedUnits = append(pacedUnits, l.Unit)
	}
	if strings.Join(ownUnits, " ") != "cpu-sec/op faults/op" {
		t.Errorf("changed as the op's work: %v, want cpu-sec/op (a work counter) and faults/op (faster per second too)", ownUnits)
	}
	if strings.Join(pacedUnits, " ") != "cs/op" {
		t.Errorf("changed with the op's time: %v, want cs/op (same rate per second)", pacedUnits)
	}
	if strings.Join(same, " ") != "softirq-timer/op" {
		t.Errorf("unchanged: %v, want softirq-timer/op", same)
	}
	for _, l := range own {
		if l.Unit == "faults/op" && (l.Rate == nil || !near(l.Rate.Change, 1)) {
			t.Errorf("faults per second: %+v, want +100%%", l.Rate)
		}
	}
}

// TestAttributionNeverDecides: counters that got worse while the headline
// did not leave the exit status 0.
func TestAttributionNeverDecides(t *testing.T) {
	old := resultFile{units: counterUnits, lines: samples("Op-2", 10, "ns/op", around(100, 0.01), "cs/op", around(1, 0.01))}
	nw := resultFile{units: counterUnits, lines: samples("Op-2", 10, "ns/op", around(100, 0.01), "cs/op", around(3, 0.01))}
	var stdout, stderr bytes.Buffer
	if code := run([]string{old.write(t, "old.txt"), nw.write(t, "new.txt")}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d with only a counter worse, want 0:\n%s%s", code, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "cs/op") || !strings.Contains(stdout.String(), "+200.00%") {
		t.Errorf("the changed counter is not listed:\n%s", stdout.String())
	}
	if strings.Contains(stdout.String(), "worse:") {
		t.Errorf("a counter was called worse:\n%s", stdout.String())
	}
}

func TestAttributionText(t *testing.T) {
	oldPath, newPath := attrFiles(t)
	var stdout, stderr bytes.Buffer
	if code := run([]string{oldPath, newPath}, &stdout, &stderr); code != 1 {
		t.Fatalf("exit %d, want 1: %s", code, stderr.String())
	}
	out := stdout.String()
	// Listed once, under the row in the first headline table (sec/op).
	if strings.Count(out, "counters that changed per op") != 1 {
		t.Fatalf("attribution not listed exactly once:\n%s", out)
	}
	secOp, loops := strings.Index(out, "sec/op (lower"), strings.Index(out, "loops/s (higher")
	attr := strings.Index(out, "counters that changed per op")
	if !(secOp < attr && attr < loops) {
		t.Errorf("attribution not under the sec/op row:\n%s", out)
	}
	for _, want := range []string{"cpu-sec/op", "+100.00%  0.000  10  up", "faults/op", "+300.00%",
		"changed per op only as the op's time did", "cs/op +100% (~/s)", "unchanged: softirq-timer/op"} {
		if !strings.Contains(out, want) {
			t.Errorf("text report lacks %q:\n%s", want, out)
		}
	}
	for _, l := range strings.Split(out, "\n") {
		if utf8.RuneCountInString(l) > abreport.Width {
			t.Errorf("line wider than %d: %q", abreport.Width, l)
		}
	}
}

func TestAttributionAA(t *testing.T) {
	oldPath, _ := attrFiles(t)
	var stdout, stderr bytes.Buffer
	if code := run([]string{oldPath, oldPath}, &stdout, &stderr); code != 0 {
		t.Fatalf("A/A exit %d", code)
	}
	if !strings.Contains(stdout.String(), "counters: none changed (4 compared)") {
		t.Errorf("A/A does not say the counters did not change:\n%s", stdout.String())
	}
}
