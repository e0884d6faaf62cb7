//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/abfile"
)

// stateSeeds are kbab.json files kbab wrote (testdata/*kbab.json).
func stateSeeds(t testing.TB) [][]byte {
	names, _ := filepath.Glob("testdata/*kbab.json")
	if len(names) == 0 {
		t.Fatal("no testdata/*kbab.json")
	}
	var seeds [][]byte
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, b)
	}
	return seeds
}

func TestParseState(t *testing.T) {
	for _, good := range stateSeeds(t) {
		if _, err := parseState(good); err != nil {
			t.Fatalf("a state kbab wrote: %v", err)
		}
	}
	if v1, err := os.ReadFile("testdata/v1-state.json"); err != nil {
		t.Fatal(err)
	} else if _, err := parseState(v1); err == nil || !strings.HasPrefix(err.Error(), "version 1 (no \"version\": an A/B of kbab before series") {
		t.Errorf("a version 1 kbab.json (an A/B's before series): %v, want it refused by its version", err)
	}
	good := stateSeeds(t)[0]
	edit := func(old, new string) []byte {
		if !bytes.Contains(good, []byte(old)) {
			t.Fatalf("the seed holds no %q", old)
		}
		return bytes.Replace(good, []byte(old), []byte(new), 1)
	}
	for in, want := range map[string]string{
		"":                  "the file is empty (0 bytes)",
		"  \n":              "the file is empty (3 bytes)",
		"[]":                "line 1, column 1 (byte 0): want a JSON object",
		"\n\nnull":          "line 3, column 1 (byte 2): want a JSON object",
		string(good[:40]):   "the JSON ends there, inside its object: cut short",
		string(good) + "{}": "more after the JSON object",
		`{"version": 3, "settings": {"boots": "3"}}`:             "settings.boots is a JSON string, want a int",
		`{"version": 3, "settings": {}, "size": {"A": 0}}`:       `json: unknown field "size"`,
		`{"version": 3, "settings": {"boots": 3, "order": "x"`:   "line 1, column 53 (byte 52): the JSON ends there",
		`{"version": 3, "settings": {"boots": 3}, "boots": [}`:   "line 1, column 52 (byte 51): invalid character '}'",
		string(edit(`"boots": 1,`, `"boots": 0,`)):               "settings.boots is 0: want 1 or more",
		string(edit(`"order": "balanced"`, `"order": "x"`)):      `settings.order is "x": want "balanced"`,
		string(edit(`"design": "fixed"`, `"design": "series2"`)): `settings.design is "series2": want one of fixed, planned, series, bisect`,
		string(edit(`"design": "fixed"`, `"design": "bisect"`)):  `settings.kernels has 2 kernels: want 2 or more (3 or more for a bisection)`,
		string(edit(`"label": "B"`, `"label": "A"`)):             `settings.kernels[1] has label "A", as kernels[0] has`,
		string(edit(`"label": "B"`, `"label": "../B"`)):          `settings.kernels[1]: label "../B": want 1 to 64 letters`,
		string(edit(`"boot": 2`, `"boot": 3`)):                   "boots[1] is boot 3: want 2 (boots finish in order)",
		string(edit(`"kernel": "B"`, `"kernel": "A"`)):           `boots[1] (boot 2) is kernel "A": want "B"`,
		string(edit(`"sha256": "`, `"sha256": "x`)):              `settings.kernels[0] is image "/`,
		string(edit(`"version": 3`, `"version": 2`)):             "version 2: this kbab reads version 3: finish that run",
		`{"settings": {"a": {}, "b": {}}, "done": []}`:           `version 1 (no "version": an A/B of kbab before series and bisections); this kbab reads version 3: finish that run with the kbab that began it, or use a new -out`,
	} {
		_, err := parseState([]byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%.60q: %v, want %q", in, err, want)
		}
	}
}

// where names the line, column and byte of an offset.
func TestWhere(t *testing.T) {
	b := []byte("ab\ncd\n")
	for off, want := range map[int64]string{0: "line 1, column 1 (byte 0)", 2: "line 1, column 3 (byte 2)", 3: "line 2, column 1 (byte 3)", 6: "line 3, column 1 (byte 6)", 99: "line 3, column 1 (byte 6)"} {
		if got := where(b, off); got != want {
			t.Errorf("where(%d) = %q, want %q", off, got, want)
		}
	}
}

// located is how an error of parseState begins: where in the file, or
// which setting or boot.
var located = regexp.MustCompile(`^(line \d+, column \d+ \(byte \d+\): |the file is empty \(\d+ bytes\)|settings\.[a-z]+ (is|has) |settings\.kernels\[\d+\]|boots\[\d+\] |boots lists \d+ finished boots|version \d+|confirmed is |counts has |pair_runs\[)`)

// Any bytes as kbab.json: a state that passes its checks and reads back
// the same after kbab writes it, or an error that says where it is wrong.
func FuzzState(f *testing.F) {
	for _, s := range stateSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := parseState(b)
		if err != nil {
			if !located.MatchString(err.Error()) {
				t.Fatalf("error %q names no place in the file", err)
			}
			return
		}
		if err := st.check(); err != nil {
			t.Fatalf("parsed, yet fails its checks: %v", err)
		}
		out, err := json.MarshalIndent(st, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		again, err := parseState(out)
		if err != nil || !reflect.DeepEqual(again, st) {
			t.Fatalf("written back, it reads %+v, %v; want %+v", again, err, st)
		}
	})
}

// resultState writes into dir the outputs of two finished boots of A,
// each with a boot id line of its own, and returns their state.
func resultState(t testing.TB, dir string, outs ...[]byte) *state {
	st := &state{Settings: settings{Boots: 2, Order: order, Kernels: []kernel{{Label: "A"}, {Label: "B"}}}}
	os.MkdirAll(filepath.Join(dir, "boots"), 0o777)
	for i, part := range outs {
		r := bootRecord{Boot: 2*i + 1, Kernel: "A"}
		if err := os.WriteFile(bootFile(dir, r), part, 0o666); err != nil {
			t.Fatal(err)
		}
		st.Boots = append(st.Boots, r)
	}
	return st
}

func TestCheckOutputs(t *testing.T) {
	want := []byte("# kbench kernel.boot_id: 1\nboot\n# kbench kernel.boot_id: 2\nboot\n")
	dir := t.TempDir()
	st := resultState(t, dir, want[:32], want[32:])
	p := filepath.Join(dir, "A.txt")
	for in, msg := range map[string]string{
		string(want):                 "",
		string(want) + "# kbench h":  "",
		string(want[:4]):             "ends at byte 4, inside boot 1's output (bytes 0-32): it was cut mid-boot",
		string(want[:40]):            "ends at byte 40, inside boot 3's output (bytes 32-64)",
		string(want[:59]) + "BOOT\n": "bytes 32-64, boot 3's output, are not what it appended (" + filepath.Join(dir, "boots", "03-A.txt"),
	} {
		os.WriteFile(p, []byte(in), 0o666)
		var stderr bytes.Buffer
		ids, err := st.checkOutputs(dir, &stderr)
		got, _ := os.ReadFile(p)
		switch {
		case msg == "" && (err != nil || !bytes.Equal(got, want) || !ids["1"] || !ids["2"] || len(ids) != 2):
			t.Errorf("%q: %v, ids %v, file now %q; want it cut to the finished boots", in, err, ids, got)
		case msg == "" && len(in) > len(want) && !strings.Contains(stderr.String(), "cutting 10 bytes past its last finished boot"):
			t.Errorf("%q: cut without saying so: %q", in, stderr.String())
		case msg != "" && (err == nil || !strings.Contains(err.Error(), msg) || !strings.HasPrefix(err.Error(), p)):
			t.Errorf("%q: %v, want %q", in, err, msg)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "B.txt")); err != nil || len(b) != 0 {
		t.Errorf("B.txt, of no finished boots: %q, %v; want it made empty", b, err)
	}
	os.Remove(p)
	if _, err := st.checkOutputs(dir, io.Discard); err == nil || !strings.Contains(err.Error(), "ends at byte 0, inside boot 1's output") {
		t.Errorf("A.txt gone: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "boots", "03-A.txt"), want[:32], 0o666)
	os.WriteFile(p, append(want[:32:32], want[:32]...), 0o666)
	if _, err := st.checkOutputs(dir, io.Discard); err == nil || !strings.Contains(err.Error(), "has boot id 1, which an earlier boot printed") {
		t.Errorf("a boot id printed twice: %v", err)
	}
	st.Profiled = []profiledBoot{{Boot: 1, Side: "A", BootIDs: []string{"1"}}}
	resultState(t, dir, want[:32], want[32:])
	os.WriteFile(p, want, 0o666)
	if _, err := st.checkOutputs(dir, io.Discard); err == nil || !strings.Contains(err.Error(), "profiled[0] (profile boot 1) has boot id 1, which an earlier boot printed") {
		t.Errorf("a profile boot's id a timed boot printed: %v", err)
	}
}

// Any bytes as A.txt: kbab resumes exactly when they begin with what the
// finished boots appended (cutting the rest), and otherwise names the
// file and where.
func FuzzResultFile(f *testing.F) {
	a, err := os.ReadFile("testdata/A.txt") // a boot's output
	if err != nil {
		f.Fatal(err)
	}
	b := bytes.Replace(a, []byte(abfile.BootIDLine), []byte(abfile.BootIDLine+"2"), 1) // another boot's
	want := append(a[:len(a):len(a)], b...)
	f.Add(want)
	f.Add(append(append([]byte(nil), want...), "BenchmarkX-2\t10\t"...))
	f.Add(want[:len(want)/3])
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, in []byte) {
		st := resultState(t, dir, a, b)
		p := filepath.Join(dir, "A.txt")
		os.WriteFile(p, in, 0o666)
		_, err := st.checkOutputs(dir, io.Discard)
		got, _ := os.ReadFile(p)
		switch {
		case bytes.HasPrefix(in, want) && (err != nil || !bytes.Equal(got, want)):
			t.Fatalf("it holds the finished boots: %v, file now %d bytes of %d", err, len(got), len(want))
		case !bytes.HasPrefix(in, want) && err == nil:
			t.Fatalf("accepted a file that is not the finished boots' output")
		case err != nil && (!strings.HasPrefix(err.Error(), p) || !strings.Contains(err.Error(), "byte")):
			t.Fatalf("error %q does not name the file and where", err)
		}
	})
}
