//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/abseries"
)

// writeList writes a kernel list of n kernels, all f.imgA, kernel k's
// cmdline kbab.k=k (so that the fake's calls tell them apart) and
// step=Work from kernel step on (0: none).
func (f *fake) writeList(n, step int) string {
	var b strings.Builder
	b.WriteString("# a series for the test\n\n")
	for k := 1; k <= n; k++ {
		fmt.Fprintf(&b, "K%d %s kbab.k=%d", k, f.imgA, k)
		if step > 0 && k >= step {
			b.WriteString(" step=Work")
		}
		b.WriteString("\n")
	}
	p := filepath.Join(f.dir, "kernels.list")
	if err := os.WriteFile(p, []byte(b.String()), 0o666); err != nil {
		f.t.Fatal(err)
	}
	return p
}

// callKernels are the kernels (1-based) of the fake's calls, by their
// kbab.k=K cmdline.
func (f *fake) callKernels() []int {
	var ks []int
	re := regexp.MustCompile(`kbab\.k=(\d+)`)
	for _, c := range f.calls() {
		m := re.FindStringSubmatch(c)
		if m == nil {
			f.t.Fatalf("call %q has no kbab.k", c)
		}
		var k int
		fmt.Sscan(m[1], &k)
		ks = append(ks, k)
	}
	return ks
}

// TestSeries: a series of 5 kernels (one image, five cmdlines), Work 10%
// slower from K4 on, 4 boots each: the boots go in balanced rounds, are
// appended to K1.txt..K5.txt, survive a Ctrl-C and a failed boot, a
// changed list is refused naming the kernel, and the report finds
// Work's change between K3 and K4 and none in Noisy, with a picture.
func TestSeries(t *testing.T) {
	f := newFake(t)
	f.knob("planned", 0)
	f.knob("seed", 38)
	const n, nb = 5, 4
	list := f.writeList(n, 4)
	self, _ := os.Executable()
	args := []string{"-series", list, "-boots", "4", "-out", f.out, "-vmexec", self, "--", ".", "-run=^$", "-bench=.", "-count=5"}

	// Ctrl-C in boot 3, then a failed boot 7: each resumes.
	code, _, stderr, _ := f.interruptAt(3, args...)
	if code != exitInterrupted || !strings.Contains(stderr, "keeps the 2 finished boots") {
		t.Fatalf("interrupted: exit %d, want %d keeping 2 boots\n%s", code, exitInterrupted, stderr)
	}
	f.knob("fail-at", 7) // the 6th boot: call 3 hung
	if code, _, stderr := f.run(nil, args...); code != exitBootFailed || !strings.Contains(stderr, "resuming") || !strings.Contains(stderr, "boot 6 of 20") {
		t.Fatalf("resumed then failed: exit %d, want %d at boot 6 of 20\n%s", code, exitBootFailed, stderr)
	}
	os.Remove(filepath.Join(f.dir, "fail-at"))

	// Another cmdline for K5: refused, naming it.
	os.WriteFile(list+".2", []byte(strings.Replace(mustRead(t, list), "kbab.k=5", "kbab.k=50", 1)), 0o666)
	os.Rename(list+".2", list)
	if code, _, stderr := f.run(nil, args...); code != exitUsage || !strings.Contains(stderr, `kernel K5's cmdline: was "kbab.k=5 step=Work", now "kbab.k=50 step=Work"`) {
		t.Errorf("changed list: exit %d, want %d naming kernel 5's cmdline\n%s", code, exitUsage, stderr)
	}
	f.writeList(n, 4)
	noBoots := append(args[:2:2], args[4:]...) // the series' default, abseries.DefaultBoots
	if code, _, stderr := f.run(nil, noBoots...); code != exitUsage || !strings.Contains(stderr, fmt.Sprintf(`-boots: was "4", now "%d"`, abseries.DefaultBoots)) {
		t.Errorf("changed -boots: exit %d, want %d naming -boots\n%s", code, exitUsage, stderr)
	}

	code, stdout, stderr := f.run(nil, args...)
	if code != 1 {
		t.Fatalf("series with a step: exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	// The order: calls 1, 2 and 4, 5, ... are the finished boots (call 3
	// hung, call 7 failed, each run again as the next call).
	got := f.callKernels()
	var ran []int
	for c, k := range got {
		if c+1 != 3 && c+1 != 7 {
			ran = append(ran, k)
		}
	}
	if len(ran) != n*nb {
		t.Fatalf("%d boots ran (%d calls), want %d", len(ran), len(got), n*nb)
	}
	// Balanced: every round boots each kernel once, and over each pair
	// of rounds every kernel's mean place is the same, (2n-1)/2.
	for r := 0; r < nb; r += 2 {
		places := map[int]int{}
		for j := range 2 * n {
			places[ran[r*n+j]] += j
		}
		for k := 1; k <= n; k++ {
			if places[k] != 2*n-1 {
				t.Errorf("rounds %d-%d: %v; kernel K%d's places sum to %d, want %d (each kernel once a round, mirrored)", r+1, r+2, ran[r*n:r*n+2*n], k, places[k], 2*n-1)
			}
		}
	}
	// Rotated: the first pair of rounds starts at K1, the second at K2.
	if ran[0] != 1 || ran[2*n] != 2 {
		t.Errorf("order %v: want the second pair of rounds rotated by one", ran)
	}
	for k := 1; k <= n; k++ {
		if b := boots(t, filepath.Join(f.out, fmt.Sprintf("K%d.txt", k))); b != nb {
			t.Errorf("K%d.txt holds %d boots, want %d", k, b, nb)
		}
	}
	for _, w := range []string{
		"fake Work-2 (sec/op)\n  between K3 and K4: +",
		"pictures: series/ (",
		"1 row without a change, each with what it could have seen",
		"  fake Noisy-2  mde ",
		"K4: bzImage-a kbab.k=4 step=Work",
		"retried: ",
	} {
		if w == "retried: " {
			if strings.Contains(stdout, w) {
				t.Errorf("report names a retry, none was a lost guest:\n%s", stdout)
			}
			continue
		}
		if !strings.Contains(stdout, w) {
			t.Errorf("report lacks %q:\n%s", w, stdout)
		}
	}
	if !regexp.MustCompile(`between K3 and K4: \+(9\.[5-9]|10\.[0-4])\d*% \[`).MatchString(stdout) {
		t.Errorf("Work's change is not the planted 10%% (within half a point):\n%s", stdout)
	}
	// Work changed: its picture comes first; Noisy did not: after it.
	for _, pic := range []string{"series-001-fake-Work-2-*.svg", "series-002-fake-Noisy-2-*.svg"} {
		pics, _ := filepath.Glob(filepath.Join(f.out, "series", pic))
		if len(pics) != 1 {
			t.Errorf("pictures %s: %v, want one", pic, pics)
		} else if svg, err := os.ReadFile(pics[0]); err != nil || !strings.Contains(string(svg), "<title>") {
			t.Errorf("picture %s: %v, or no caption", pics[0], err)
		}
	}
	if !strings.Contains(stderr, "boot 20 of 20: K") || !strings.Contains(stderr, "left") {
		t.Errorf("progress lacks boot 20 of 20 and the time left:\n%s", stderr)
	}
}

func mustRead(t *testing.T, p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
