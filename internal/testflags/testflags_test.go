//go:build linux

package testflags

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Arg
	}{
		{"./pkg", Arg{Text: "./pkg"}},
		{"-", Arg{Text: "-"}},
		{"-v", Arg{Text: "-v", Flag: true, Name: "v"}},
		{"--count=3", Arg{Text: "--count=3", Flag: true, Name: "count", Value: "3", HasValue: true}},
		{"-test.run=^A$=x", Arg{Text: "-test.run=^A$=x", Flag: true, Name: "run", Test: true, Value: "^A$=x", HasValue: true}},
		{"-bench=", Arg{Text: "-bench=", Flag: true, Name: "bench", HasValue: true}},
		{"---count=3", Arg{Text: "---count=3", Flag: true, Name: "-count", Value: "3", HasValue: true}},
	} {
		if got := Parse(c.in); got != c.want {
			t.Errorf("Parse(%q) = %+v; want %+v", c.in, got, c.want)
		}
	}
}

func TestGoTest(t *testing.T) {
	l := GoTest([]string{"-count=2", "./a", "-test.count=5", "-v", "./b", "-args", "-count=9", "x"})
	if got := l.Packages(); !slices.Equal(got, []string{"./a", "./b"}) {
		t.Errorf("Packages = %q; want ./a ./b (none from after -args)", got)
	}
	if !slices.Equal(l.Rest, []string{"-args", "-count=9", "x"}) {
		t.Errorf("Rest = %q; want -args and what follows", l.Rest)
	}
	if a, ok := l.Lookup("count"); !ok || a.Value != "5" {
		t.Errorf("Lookup(count) = %+v, %v; want the last, 5", a, ok)
	}
	if !l.Sets("v") || l.Sets("p") || l.Sets("x") {
		t.Errorf("Sets: v %v, p %v, x %v; want only v", l.Sets("v"), l.Sets("p"), l.Sets("x"))
	}
	if l := GoTest([]string{"./a", "--args"}); len(l.Args) != 1 || len(l.Rest) != 1 {
		t.Errorf("--args: %+v; want it to end go test's arguments", l)
	}
}

func TestBoolFlag(t *testing.T) {
	for name, want := range map[string]bool{"v": true, "race": true, "benchmem": true, "short": true,
		"count": false, "run": false, "bench": false, "exec": false, "p": false} {
		if BoolFlag(name) != want {
			t.Errorf("BoolFlag(%q) = %v; want %v", name, !want, want)
		}
	}
}

func TestBinary(t *testing.T) {
	got, ok := Binary([]string{"-test.run=^$", "-test.bench=Load", "-test.v", "-test.count=3", "--test.v=test2json"})
	want := map[string]string{"run": "^$", "bench": "Load", "v": "test2json", "count": "3"}
	if !ok || len(got) != len(want) {
		t.Fatalf("Binary = %v, %v; want %v", got, ok, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("Binary: %s=%q; want %q", k, got[k], v)
		}
	}
	if got, ok := Binary([]string{"-test.short"}); !ok || got["short"] != "true" {
		t.Errorf("Binary(-test.short) = %v, %v; want short=true", got, ok)
	}
	for _, args := range [][]string{
		{"-run=^$"},          // not a test binary's form
		{"-test.run", "^$"},  // a value flag's value as the next argument
		{"-test.myflag=1"},   // a package's own flag
		{"arg"},              // not a flag
		{"-test.v", "-zz=1"}, // one unknown among known
	} {
		if got, ok := Binary(args); ok {
			t.Errorf("Binary(%q) = %v, ok; want not ok", args, got)
		}
	}
}

func TestCount(t *testing.T) {
	for in, want := range map[string]int{"1": 1, "10": 10, "0": 0, "-1": 0, "x": 0, "": 0} {
		n, err := Count(in)
		if n != want || (err != nil) != (want == 0) {
			t.Errorf("Count(%q) = %d, %v; want %d", in, n, err, want)
		}
		if err != nil && !strings.Contains(err.Error(), "-count="+in) {
			t.Errorf("Count(%q): error %q does not quote the value", in, err)
		}
	}
}

// FuzzGoTest: any go test command line (arguments joined by NUL) reads
// back to what it was: every argument is once in Args, in order, or in
// Rest from the first -args on; a flag's parts rebuild its text. Each
// flag's value read as a -test.benchtime meets checkBenchtime (one
// target for the package, so that .ci/fuzz's time grows by one).
func FuzzGoTest(f *testing.F) {
	for _, s := range []string{"./a\x00-count=3\x00-v", "-test.run=X\x00-args\x00-count=1", "--bench=.\x00--args", "-\x00--\x00---x=", "",
		"-benchtime=1s", "-test.benchtime=100x", "-benchtime=1x", "-benchtime=250ms", "-benchtime=1h2m3.5s", "-benchtime=0s",
		"-benchtime=-1s", "-benchtime=x", "-benchtime=18446744073709551616x", "-benchtime="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		args := strings.Split(s, "\x00")
		l := GoTest(args)
		if len(l.Args)+len(l.Rest) != len(args) {
			t.Fatalf("GoTest(%q): %d args and %d rest, of %d", args, len(l.Args), len(l.Rest), len(args))
		}
		for i, a := range l.Args {
			checkBenchtime(t, a.Value)
			if a.Text != args[i] || a.Text == "-args" || a.Text == "--args" {
				t.Fatalf("GoTest(%q): arg %d = %+v", args, i, a)
			}
			if !a.Flag {
				if a.Name != "" || a.HasValue || (len(a.Text) > 1 && a.Text[0] == '-') {
					t.Fatalf("Parse(%q) = %+v: a non-flag with a flag's parts", a.Text, a)
				}
				continue
			}
			name := a.Name
			if a.Test {
				name = "test." + name
			}
			if a.HasValue {
				name += "=" + a.Value
			}
			if a.Text != "-"+name && a.Text != "--"+name {
				t.Fatalf("Parse(%q) = %+v: its parts do not rebuild it", a.Text, a)
			}
		}
		if len(l.Rest) > 0 && l.Rest[0] != "-args" && l.Rest[0] != "--args" {
			t.Fatalf("GoTest(%q): Rest %q does not start at -args", args, l.Rest)
		}
		if flags, ok := Binary(args); ok {
			for k := range flags {
				if !slices.Contains(testValueFlags, k) && !slices.Contains(testBoolFlags, k) {
					t.Fatalf("Binary(%q) took %q, not a testing flag", args, k)
				}
			}
		}
	})
}

func TestBenchtime(t *testing.T) {
	for _, c := range []struct {
		in    string
		fixed bool
		d     time.Duration
		err   bool
	}{
		{"1s", false, time.Second, false},
		{"250ms", false, 250 * time.Millisecond, false},
		{"100x", true, 0, false},
		{"1x", true, 0, false},
		{"x", false, 0, true},
		{"-3x", false, 0, true},
		{"0x", false, 0, true},
		{"+5x", true, 0, false}, // as testing's flag takes it
		{"0s", false, 0, true},
		{"soon", false, 0, true},
	} {
		fixed, d, err := Benchtime(c.in)
		if fixed != c.fixed || d != c.d || (err != nil) != c.err {
			t.Errorf("Benchtime(%q) = %v, %v, %v; want %v, %v, error %v", c.in, fixed, d, err, c.fixed, c.d, c.err)
		}
	}
}

// checkBenchtime: any -test.benchtime text ends in a count, a positive
// duration, or an error that quotes it; never a panic.
func checkBenchtime(t *testing.T, s string) {
	fixed, d, err := Benchtime(s)
	switch {
	case err != nil:
		if fixed || d != 0 {
			t.Fatalf("Benchtime(%q) = %v, %v with error %v", s, fixed, d, err)
		}
		if !strings.Contains(err.Error(), "-test.benchtime="+s) {
			t.Fatalf("Benchtime(%q): error %q does not quote the value", s, err)
		}
	case fixed:
		if d != 0 || !strings.HasSuffix(s, "x") {
			t.Fatalf("Benchtime(%q) = fixed with %v", s, d)
		}
	case d <= 0:
		t.Fatalf("Benchtime(%q) = duration %v without an error", s, d)
	}
}
