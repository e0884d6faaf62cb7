//go:build linux

package abfile

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchunit"

	"github.com/kbench/kbench/internal/unit"
)

// measurement refuses a result line that holds no measurement: an
// iteration count below 1, a value that is not a finite number, or a
// negative amount.
func measurement(p string, line int, rec *benchfmt.Result) error {
	if rec.Iters < 1 {
		return fmt.Errorf("%s:%d: iteration count %d is not a measurement: want at least 1 (go test runs a benchmark b.N >= 1 times)",
			p, line, rec.Iters)
	}
	for _, v := range rec.Values {
		orig, u := v.Value, v.Unit
		if v.OrigUnit != "" {
			orig, u = v.OrigValue, v.OrigUnit
		}
		text := strconv.FormatFloat(orig, 'g', -1, 64) + " " + u
		switch {
		case math.IsNaN(v.Value) || math.IsInf(v.Value, 0):
			return fmt.Errorf("%s:%d: %s is not a measurement: want a finite number", p, line, text)
		case v.Value < 0 && Amount(v.Unit):
			return fmt.Errorf("%s:%d: %s is not a measurement: want a value >= 0 (%s is a time, size, count or rate)", p, line, text, v.Unit)
		}
	}
	return nil
}

// Amount reports whether a unit (as benchfmt tidies it) measures an
// amount, which cannot be negative: anything per op or per second, a
// time or a size, and every unit kbench declares (internal/unit).
func Amount(u string) bool {
	if strings.Contains(u, "/") {
		return true
	}
	for _, part := range strings.Split(u, "-") {
		if part == "sec" || part == "B" {
			return true
		}
	}
	for k := range unit.Units {
		if _, tidy := benchunit.Tidy(1, k); tidy == u || k == u {
			return true
		}
	}
	return false
}
