//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/abreport"
	"github.com/kbench/kbench/internal/abstat"
	"github.com/kbench/kbench/internal/abstat/sim"
)

// formCases are comparisons of every kind the JSON form carries:
// boots as samples, per sample, failures, setup differences and kernel
// counters under a row.
func formCases(t *testing.T) map[string][2]string {
	t.Helper()
	attrOld, attrNew := attrFiles(t)
	return map[string][2]string{
		"boots, worse":  {sim.Assemble(t, "old.txt", sim.BootFiles("a", sim.BootsA, nil)...), sim.Assemble(t, "new.txt", sim.BootFiles("b", sim.BootsB, nil)...)},
		"boots, A/A":    {sim.Assemble(t, "old.txt", sim.BootFiles("a", sim.BootsA, nil)...), sim.Assemble(t, "new.txt", sim.BootFiles("a2", sim.BootsB, nil)...)},
		"one boot":      {sim.Assemble(t, "old.txt", sim.BootFiles("a", sim.OneA, nil)...), sim.Assemble(t, "new.txt", sim.BootFiles("b", sim.OneB, nil)...)},
		"failed rows":   {sim.File(t, "fail-old.txt"), sim.File(t, "fail-new.txt")},
		"counters":      {attrOld, attrNew},
		"same file A/A": {sim.File(t, "fail-old.txt"), sim.File(t, "fail-old.txt")},
	}
}

// TestJSONRoundTrip: -format json decodes into the very record it was
// made from (every field of it the record's, written back the same), and
// exits as the text report does.
func TestJSONRoundTrip(t *testing.T) {
	for name, files := range formCases(t) {
		t.Run(name, func(t *testing.T) {
			r, err := abstat.Compare(files[0], files[1], defaults)
			if err != nil {
				t.Fatal(err)
			}
			want := abreport.New(r, nil, nil)
			var out, errOut bytes.Buffer
			code := run([]string{"-format", "json", files[0], files[1]}, &out, &errOut)
			if code != want.Exit() || want.Summary.Exit != code {
				t.Errorf("exit %d, the record's status %d, summary.exit %d", code, want.Exit(), want.Summary.Exit)
			}
			textCode := run([]string{files[0], files[1]}, &bytes.Buffer{}, &bytes.Buffer{})
			if code != textCode {
				t.Errorf("json exits %d, text %d", code, textCode)
			}
			var got abreport.AB
			dec := json.NewDecoder(bytes.NewReader(out.Bytes()))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&got); err != nil {
				t.Fatalf("decoding: %v\n%s", err, out.String())
			}
			var again bytes.Buffer
			if err := abreport.WriteJSON(&again, &got); err != nil || again.String() != out.String() {
				t.Errorf("round trip differs (%v):\ngot  %s\nwant %s", err, again.String(), out.String())
			}
			if len(got.Rows) == 0 || len(got.Rows) != len(want.Rows) {
				t.Errorf("%d rows, want %d", len(got.Rows), len(want.Rows))
			}
		})
	}
}

// TestCSVRecipe runs docs/kbcompare.md's jq recipe, which stands for the
// CSV form, on a golden set's JSON: a header and one record per row,
// nulls empty.
func TestCSVRecipe(t *testing.T) {
	jq, err := exec.LookPath("jq")
	if err != nil {
		t.Skip("no jq on PATH: the recipe is not run")
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "kbcompare.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, line, ok := strings.Cut(string(doc), "kbcompare -format json old.txt new.txt | jq -r '")
	prog, _, ok2 := strings.Cut(line, "'\n")
	if !ok || !ok2 {
		t.Fatal("docs/kbcompare.md has no jq recipe")
	}
	dir := filepath.Join("testdata", "golden", "verdicts")
	var js bytes.Buffer
	run([]string{"-format", "json", filepath.Join(dir, "old.txt"), filepath.Join(dir, "new.txt")}, &js, &bytes.Buffer{})
	var m struct{ Rows []json.RawMessage }
	if err := json.Unmarshal(js.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(jq, "-r", prog)
	cmd.Stdin = &js
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("jq: %v", err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != 1+len(m.Rows) || lines[0] != `"package","ident","name","unit","verdict","old","new","change","p","q"` ||
		!strings.HasPrefix(lines[1], `"fakebench",,"Slower-2","sec/op","worse",1.0000000000000001e-07,1.1e-07,`) {
		t.Errorf("the recipe's CSV:\n%s", out)
	}
}
