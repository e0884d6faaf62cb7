//go:build linux

package percent

import (
	"flag"
	"io"
	"math"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in   string
		k    Kind
		want float64
		ok   bool
	}{
		{"5", Threshold, 0.05, true},
		{"5%", Effect, 0.05, true},
		{" 2.5% ", Threshold, 0.025, true},
		{"0", Threshold, 0, true},
		{"0%", Effect, 0, false},
		{"99.9", Effect, 0.999, true},
		{"100", Threshold, 0, false},
		{"100%", Effect, 0, false},
		{"-1", Threshold, 0, false},
		{"NaN", Threshold, 0, false},
		{"Inf", Effect, 0, false},
		{"five", Threshold, 0, false},
		{"5%%", Threshold, 0, false},
	} {
		got, err := parse(c.in, c.k)
		if (err == nil) != c.ok || math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Parse(%q, %d) = %v, %v; want %v, ok %v", c.in, c.k, got, err, c.want, c.ok)
		}
	}
}

// TestFlag: as a flag, a bad value stops the parse naming the flag and
// leaves the default; String prints what Set reads back.
func TestFlag(t *testing.T) {
	th, target := 0.05, 0.0
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Var(Value{&th, Threshold}, "threshold", "")
	fs.Var(Value{&target, Effect}, "target", "")
	if err := fs.Parse([]string{"-threshold", "150%"}); err == nil || !strings.Contains(err.Error(), "-threshold") || th != 0.05 {
		t.Errorf("-threshold 150%%: %v, threshold %v; want an error naming it and 0.05 kept", err, th)
	}
	if err := fs.Parse([]string{"-threshold", "2.5", "-target", "10%"}); err != nil || th != 0.025 || target != 0.1 {
		t.Errorf("-threshold 2.5 -target 10%%: %v, %v, %v", err, th, target)
	}
	if s := (Value{&th, Threshold}).String(); s != "2.5%" {
		t.Errorf("String = %q; want 2.5%%", s)
	}
	zero := 0.0
	if s := (Value{&zero, Effect}).String(); s != "" {
		t.Errorf("unset Effect: String = %q; want empty", s)
	}
	if s := (Value{&zero, Threshold}).String(); s != "0%" {
		t.Errorf("0 Threshold: String = %q; want 0%%", s)
	}
}

// FuzzParse: any text is refused or read to a fraction within its
// kind's bounds whose String reads back to itself.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"5", "5%", "0", "99.99%", "100", "-0", "1e-300", "NaN", "+Inf", " 7 %", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, k := range []Kind{Threshold, Effect} {
			x, err := parse(s, k)
			if err != nil {
				if x != 0 {
					t.Fatalf("Parse(%q, %d) = %v with error %v", s, k, x, err)
				}
				continue
			}
			if !(x >= 0 && x < 1) || (k == Effect && x == 0) {
				t.Fatalf("Parse(%q, %d) = %v: outside its bounds", s, k, x)
			}
			if k == Effect || x != 0 {
				back, err := parse(Value{&x, k}.String(), k)
				if err != nil || math.Abs(back-x) > 1e-12*math.Max(x, 1e-300) {
					t.Fatalf("Parse(%q, %d) = %v, whose String %q reads back as %v, %v", s, k, x, Value{&x, k}.String(), back, err)
				}
			}
		}
	})
}

// parse is the fraction Set reads s to as a percentage of kind k: 0 with
// its error where it refuses s.
func parse(s string, k Kind) (float64, error) {
	var x float64
	err := Value{&x, k}.Set(s)
	return x, err
}
