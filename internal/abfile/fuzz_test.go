//go:build linux

package abfile_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/abfile"
	"github.com/kbench/kbench/internal/abstat/sim"
)

// Bounded time: the fuzzing engine fails an input that runs past 10
// seconds (the worker panics, and the input is kept as a crasher); the
// reader takes milliseconds on what it makes. A NaN sample made
// kbcompare spin until killed before its reader refused it.

// FuzzRead: any file either reads as results that are measurements
// (iteration counts >= 1, finite values, no negative amounts) and
// outcomes, each in a boot the file lists once and at a line it has, or
// is refused with an error naming the file, the
// line and what was wanted; in bounded time, without a panic. IsResult
// takes each result's line as Read took it.
func FuzzRead(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		const p = "in.txt"
		var files []*abfile.File
		var err error
		files, _, err = abfile.ReadData([]string{p}, [][]byte{data})
		if err != nil {
			if !sim.ErrorForm(p).MatchString(err.Error()) {
				t.Fatalf("error %q does not name the file and line and what was wanted", err)
			}
			return
		}
		fl := files[0]
		if ids := fl.Boots; len(slices.Compact(slices.Sorted(slices.Values(ids)))) != len(ids) {
			t.Fatalf("boots %q listed twice", ids)
		}
		lines := strings.Split(string(data), "\n")
		for _, o := range fl.Outcomes {
			if o.Kind < abfile.Failed || o.Kind > abfile.BinaryFailed || o.Line < 1 || o.Line > len(lines) ||
				!slices.Contains(fl.Boots, o.Boot) {
				t.Fatalf("outcome %+v: kind, line (of %d), boot (of %q) wrong", o, len(lines), fl.Boots)
			}
		}
		for _, r := range fl.Results {
			if !abfile.IsResult(lines[r.Line-1]) {
				t.Fatalf("line %d, %q, is a result Read took, which IsResult refuses", r.Line, lines[r.Line-1])
			}
			if r.Iters < 1 || r.Line < 1 || !strings.Contains(strings.Join(fl.Boots, "\x00")+"\x00", r.Boot+"\x00") {
				t.Fatalf("result %+v: iterations, line or boot (boots %q) wrong", r, fl.Boots)
			}
			for _, v := range r.Values {
				if math.IsNaN(v.Value) || math.IsInf(v.Value, 0) || v.Value < 0 && abfile.Amount(v.Unit) {
					t.Fatalf("result at line %d holds %v %s, not a measurement", r.Line, v.Value, v.Unit)
				}
			}
		}
	})
}
