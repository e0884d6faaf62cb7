//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
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

// resume reads kbab.json's text b as a resume with settings now does.
func resume(b []byte, now settings) (*state, error) {
	st, err := parseState(b)
	if err != nil {
		return nil, err
	}
	if diff := differences(st.Settings, now); len(diff) > 0 {
		return nil, errors.New("other settings: " + strings.Join(diff, "; "))
	}
	return st, st.check()
}

func TestParseState(t *testing.T) {
	for _, good := range stateSeeds(t) {
		if st, err := parseState(good); err != nil {
			t.Fatalf("a state kbab wrote: %v", err)
		} else if err := st.check(); err != nil {
			t.Fatalf("a state kbab wrote: %v", err)
		}
	}
	if v1, err := os.ReadFile("testdata/v1-state.json"); err != nil {
		t.Fatal(err)
	} else if _, err := parseState(v1); err == nil || !strings.HasPrefix(err.Error(), "version 0: this kbab reads version 4") {
		t.Errorf("a version 1 kbab.json (no version): %v, want it refused by its version", err)
	}
	good := stateSeeds(t)[0]
	now, err := parseState(good)
	if err != nil {
		t.Fatal(err)
	}
	edit := func(old, new string) []byte {
		if !bytes.Contains(good, []byte(old)) {
			t.Fatalf("the seed holds no %q", old)
		}
		return bytes.Replace(good, []byte(old), []byte(new), 1)
	}
	for in, want := range map[string]string{
		"":                  "unexpected end of JSON input",
		"  \n":              "unexpected end of JSON input",
		"[]":                "json: cannot unmarshal array",
		"\n\nnull":          "version 0: this kbab reads version 4",
		string(good[:40]):   "unexpected end of JSON input",
		string(good) + "{}": "invalid character '{' after top-level value",
		`{"version": 4, "settings": {"boots": "3"}}`:            "json: cannot unmarshal string into Go struct field",
		`{"version": 4, "settings": {}, "size": {"A": 0}}`:      `json: unknown field "size"`,
		`{"version": 4, "settings": {"boots": 3, "smp": "x"`:    "unexpected end of JSON input",
		`{"version": 4, "settings": {"boots": 3}, "boots": [}`:  "invalid character '}'",
		string(edit(`"boots": 1,`, `"boots": 0,`)):              `other settings: -boots: was "0", now "1"`,
		string(edit(`"design": "fixed"`, `"design": "bisect"`)): `other settings: design: was "bisect", now "fixed"`,
		string(edit(`"label": "B"`, `"label": "A"`)):            `other settings: kernel B's label: was "A", now "B"`,
		string(edit(`"sha256": "`, `"sha256": "x`)):             `other settings: kernel A's contents (SHA-256): was "x`,
		string(edit(`"boot": 2`, `"boot": 3`)):                  "boots[1] is boot 3: want 2 (boots finish in order)",
		string(edit(`"kernel": "B"`, `"kernel": "A"`)):          `boots[1] (boot 2) is kernel "A": want "B"`,
		string(edit(`"version": 4`, `"version": 3`)):            "version 3: this kbab reads version 4: finish that run",
	} {
		_, err := resume([]byte(in), now.Settings)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%.60q: %v, want %q", in, err, want)
		}
	}
}

// located is how an error of a resume's reading begins: json's (what
// is wrong), which version, which setting or which boot.
var located = regexp.MustCompile(`^(json: |invalid character |Time.UnmarshalJSON|parsing time |unexpected end of JSON input|version \d+|other settings: |boots\[\d+\] |confirmed is )`)

// Any bytes as kbab.json, resumed with a seed's settings: a state that
// passes its checks and reads back the same after kbab writes it, or an
// error that says what is wrong.
func FuzzState(f *testing.F) {
	seeds := stateSeeds(f)
	for _, s := range seeds {
		f.Add(s)
	}
	now, err := parseState(seeds[0])
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := resume(b, now.Settings)
		if err != nil {
			if !located.MatchString(err.Error()) {
				t.Fatalf("error %q names no place in the file", err)
			}
			return
		}
		out, err := json.MarshalIndent(st, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		again, err := resume(out, now.Settings)
		if err != nil || !reflect.DeepEqual(again, st) {
			t.Fatalf("written back, it reads %+v, %v; want %+v", again, err, st)
		}
	})
}

// resultState writes into dir the outputs of two finished boots of A,
// each with a boot id line of its own, and returns their state.
func resultState(t testing.TB, dir string, outs ...[]byte) *state {
	st := &state{Settings: settings{Boots: 2, Kernels: []kernel{{Label: "A"}, {Label: "B"}}}}
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
	for in, anew := range map[string]bool{
		string(want):                 false,
		string(want) + "# kbench h":  true,
		string(want[:4]):             true,
		string(want[:59]) + "BOOT\n": true,
	} {
		os.WriteFile(p, []byte(in), 0o666)
		var stderr bytes.Buffer
		ids, err := st.checkOutputs(dir, &stderr)
		got, _ := os.ReadFile(p)
		if err != nil || !bytes.Equal(got, want) || !ids["1"] || !ids["2"] || len(ids) != 2 {
			t.Errorf("%q: %v, ids %v, file now %q; want it the finished boots' outputs", in, err, ids, got)
		}
		if said := strings.Contains(stderr.String(), fmt.Sprintf("%s: %d bytes, not the 64 of its finished boots' outputs", p, len(in))); said != anew {
			t.Errorf("%q: stderr %q; want it named %v", in, stderr.String(), anew)
		}
		// An edit (neither a prefix of the outputs nor they of it) is kept.
		edit := !strings.HasPrefix(in, string(want)) && !strings.HasPrefix(string(want), in)
		if old, err := os.ReadFile(p + ".old"); edit != (err == nil) || edit && string(old) != in {
			t.Errorf("%q: A.txt.old %q, %v; want it kept: %v", in, old, err, edit)
		}
		os.Remove(p + ".old")
	}
	if b, err := os.ReadFile(filepath.Join(dir, "B.txt")); err != nil || len(b) != 0 {
		t.Errorf("B.txt, of no finished boots: %q, %v; want it made empty", b, err)
	}
	os.Remove(p)
	if _, err := st.checkOutputs(dir, io.Discard); err != nil {
		t.Errorf("A.txt gone: %v, want it written anew", err)
	} else if got, _ := os.ReadFile(p); !bytes.Equal(got, want) {
		t.Errorf("A.txt gone: written anew as %q", got)
	}
	os.Remove(filepath.Join(dir, "boots", "03-A.txt"))
	if _, err := st.checkOutputs(dir, io.Discard); err == nil || !strings.Contains(err.Error(), "boot 3's output, which kbab.json says finished") {
		t.Errorf("a finished boot's output gone: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "boots", "03-A.txt"), want[:32], 0o666)
	if _, err := st.checkOutputs(dir, io.Discard); err == nil || !strings.Contains(err.Error(), "has boot id 1, which an earlier boot printed") {
		t.Errorf("a boot id printed twice: %v", err)
	}
	st = resultState(t, dir, want[:32], want[32:])
	st.Boots = append(st.Boots, bootRecord{Boot: 5, Kernel: "A", Profile: 1})
	os.WriteFile(bootFile(dir, st.Boots[2]), want[:32], 0o666)
	if _, err := st.checkOutputs(dir, io.Discard); err == nil || !strings.Contains(err.Error(), "p01-A.txt has boot id 1, which an earlier boot printed") {
		t.Errorf("a profile boot's id a timed boot printed: %v", err)
	}
}

// differences names each setting that differs as the option that sets
// it, and none where the settings are the same.
func TestDifferences(t *testing.T) {
	st, err := parseState(stateSeeds(t)[0])
	if err != nil {
		t.Fatal(err)
	}
	old := st.Settings
	if d := differences(old, old); len(d) != 0 {
		t.Errorf("the same settings: %q", d)
	}
	now := old
	now.GoTest = append([]string{"-v"}, old.GoTest...)
	now.Env = []string{"KBENCH_COUNTERS=all"}
	now.Kernels = append([]kernel(nil), old.Kernels...)
	now.Kernels[1].Append += " quiet"
	got := strings.Join(differences(old, now), "\n")
	for _, w := range []string{"go test arguments: was \"[", "KBENCH_* and GOFLAGS environment: was \"[]\", now \"[KBENCH_COUNTERS=all]\"", "kernel B's cmdline: was"} {
		if !strings.Contains(got, w) {
			t.Errorf("differences lack %q:\n%s", w, got)
		}
	}
	if n := len(differences(old, now)); n != 3 {
		t.Errorf("%d differences, want 3:\n%s", n, got)
	}
}
