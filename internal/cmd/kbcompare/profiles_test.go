//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/abreport"
	"github.com/kbench/kbench/internal/abstat/sim"
)

// profileFixture returns the golden set "profiles": the syscall
// fixture's results, 3 boots a side, and for its row 3 boots of profiles
// a side, the new side's with the injected function at 10% (package
// profdelta's fixture, whose TestFixtureFiles writes them).
func profileFixture(t *testing.T) (old, nw, oldDir, newDir string) {
	dir := filepath.Join("testdata", "golden", "profiles")
	return filepath.Join(dir, "old.txt"), filepath.Join(dir, "new.txt"), filepath.Join(dir, "profiles-old"), filepath.Join(dir, "profiles-new")
}

// injected is the function profdelta's fixture injects.
const injected = "bpf_jit_blind_constants"

// TestProfileSection runs kbcompare with two directories of fixture
// profiles: in every form the injected function leads the row's
// section, with its spreads; without the flags each form is what it was.
func TestProfileSection(t *testing.T) {
	old, nw, oldDir, newDir := profileFixture(t)
	flags := []string{"-profiles-old", oldDir, "-profiles-new", newDir}
	for _, format := range []string{"text", "brief", "json"} {
		plain, code := compareRun(t, "-format", format, old, nw)
		with, code2 := compareRun(t, append(append([]string{"-format", format}, flags...), old, nw)...)
		if code != 1 || code2 != 1 {
			t.Errorf("%s: exit %d and %d with profiles, want 1 (worse)", format, code, code2)
		}
		if strings.Contains(plain, "perf-profile") || strings.Contains(plain, injected) {
			t.Errorf("%s: a profile section without profiles", format)
		}
		switch format {
		case "text", "brief":
			if !strings.HasPrefix(with, plain) {
				t.Errorf("%s: the report with profiles does not begin with the report without", format)
			}
			sec := with[len(plain):]
			head := "perf-profile seccompbench " + sim.SyscallRow + " (worse"
			for _, want := range []string{head, "cpu-clock at 4000 Hz per CPU, system-wide, 3+3 boots, kernel functions"} {
				if !strings.Contains(sec, want) {
					t.Errorf("%s: section lacks %q:\n%s", format, want, sec)
				}
			}
			// Wrapped (brief) as the form has it.
			if flat := strings.Join(strings.Fields(sec), " "); !strings.Contains(flat, "by |t| of s/op, shares beside") {
				t.Errorf("%s: section does not say it is ordered by the time per op:\n%s", format, sec)
			}
			first := firstFunctionLine(sec)
			if !strings.Contains(first, injected) || !strings.Contains(first, " 0 ") || !strings.Contains(first, "+1.") {
				t.Errorf("%s: first function line %q, want the injected one, 0 -> about 1.2 ms/op", format, first)
			}
			if format != "brief" && !strings.Contains(first, "0.00→9.") {
				t.Errorf("%s: first function line %q lacks its share, 0.00 -> about 9.1%%", format, first)
			}
			if format == "brief" {
				checkLines(t, sec, 80)
			} else if format == "text" {
				checkLines(t, sec, 100)
			}
		case "json":
			checkProfileJSON(t, plain, with)
		}
	}
}

// firstFunctionLine is the first line of a section that lists a
// function: the line after the first column header, or the brief form's
// first "self"/"child" line.
func firstFunctionLine(sec string) string {
	lines := strings.Split(sec, "\n")
	for i, l := range lines {
		f := strings.Fields(l)
		switch {
		case len(f) > 0 && (f[0] == "self" || f[0] == "child"):
			return l
		case len(f) > 2 && f[0] == "old" && slices.Contains(f, "change") && i+1 < len(lines):
			return lines[i+1]
		case strings.HasPrefix(l, "|---") && i+1 < len(lines):
			return lines[i+1]
		}
	}
	return ""
}

func checkLines(t *testing.T, s string, width int) {
	t.Helper()
	for _, l := range strings.Split(s, "\n") {
		if n := len([]rune(l)); n > width {
			t.Errorf("%d columns, over %d: %q", n, width, l)
		}
	}
}

// checkProfileJSON checks the profiles field's schema: the keys of a
// row's entry and of a function, and the injected function's numbers.
func checkProfileJSON(t *testing.T, plain, with string) {
	t.Helper()
	var p0 map[string]any
	if err := json.Unmarshal([]byte(plain), &p0); err != nil {
		t.Fatal(err)
	}
	if _, ok := p0["profiles"]; ok {
		t.Error("json: a profiles field without profiles")
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(with), &m); err != nil {
		t.Fatal(err)
	}
	profs, _ := m["profiles"].([]any)
	if len(profs) != 1 {
		t.Fatalf("json: profiles %v, want one row", m["profiles"])
	}
	row := profs[0].(map[string]any)
	keys := func(o map[string]any) []string {
		var ks []string
		for k := range o {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		return ks
	}
	wantRow := []string{"boot_ids", "boots", "children", "min_share", "name", "ops", "package", "per_op_unit", "sampling", "self", "verdict"}
	if got := keys(row); !slices.Equal(got, wantRow) {
		t.Errorf("json: a profile row's keys %v, want %v", got, wantRow)
	}
	if row["package"] != "seccompbench" || row["name"] != sim.SyscallRow || row["verdict"] != "worse" ||
		row["per_op_unit"] != "cpu nanoseconds" || len(row["ops"].([]any)[1].([]any)) != 3 {
		t.Errorf("json: row %v", row)
	}
	smpl := row["sampling"].([]any)[1].([]any)[0].(map[string]any)
	if smpl["event"] != "cpu-clock" || smpl["hz"] != 4000.0 || smpl["scope"] != "system-wide" {
		t.Errorf("json: sampling %v", smpl)
	}
	for _, form := range []string{"self", "children"} {
		fs := row[form].([]any)
		top := fs[0].(map[string]any)
		wantFn := []string{"change", "df", "function", "new", "old", "p", "per_op", "q", "rel_change", "t"}
		if got := keys(top); !slices.Equal(got, wantFn) {
			t.Errorf("json: a function's keys %v, want %v", got, wantFn)
		}
		oldS, newS := top["old"].(map[string]any), top["new"].(map[string]any)
		if got := keys(newS); !slices.Equal(got, []string{"boots", "mean", "sd"}) {
			t.Errorf("json: a share's keys %v", got)
		}
		if top["function"] != injected || oldS["mean"] != 0.0 || oldS["sd"] != 0.0 || top["rel_change"] != nil {
			t.Errorf("json: %s first %v, want the injected function from 0 ± 0, rel_change null", form, top)
		}
		if m, sd := newS["mean"].(float64), newS["sd"].(float64); !(m > 0.085 && m < 0.095 && sd > 0 && sd < 0.01*m*3) ||
			len(newS["boots"].([]any)) != 3 {
			t.Errorf("json: %s injected new share %v", form, newS)
		}
		if q := top["q"].(float64); !(q <= 0.05) {
			t.Errorf("json: %s injected q %v", form, q)
		}
		po := top["per_op"].(map[string]any)
		if got, want := keys(po), []string{"change", "df", "new", "old", "p", "q", "rel_change", "t"}; !slices.Equal(got, want) {
			t.Errorf("json: per_op's keys %v, want %v", got, want)
		}
		poOld, poNew := po["old"].(map[string]any), po["new"].(map[string]any)
		if m, sd := poNew["mean"].(float64), poNew["sd"].(float64); poOld["mean"] != 0.0 || !(m > 1e6 && m < 1.5e6 && sd > 0 && sd < 0.05*m) ||
			!(po["q"].(float64) <= 0.05) || len(poNew["boots"].([]any)) != 3 {
			t.Errorf("json: %s injected per op %v, want 0 -> about 1.2e6 ns/op", form, po)
		}
	}
	// The schema is abreport.AB's: nothing decodes outside it.
	dec := json.NewDecoder(strings.NewReader(with))
	dec.DisallowUnknownFields()
	var mm abreport.AB
	if err := dec.Decode(&mm); err != nil {
		t.Errorf("json: %v", err)
	}
}

// TestProfileFlags checks the flags' refusals (exit 2, naming the flag)
// and -plot's difference profile and flame graph.
func TestProfileFlags(t *testing.T) {
	old, nw, oldDir, newDir := profileFixture(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-profiles-old", oldDir}, "-profiles-old and -profiles-new go together"},
		{[]string{"-profiles-old", oldDir, "-profiles-new", newDir, "-profile-comm", "("}, "-profile-comm accepts a regular expression"},
		{[]string{"-profiles-old", oldDir, "-profiles-new", newDir, "-profile-comm", "^nobody$"}, "the old side has no profile with samples"},
		{[]string{"-profiles-old", t.TempDir(), "-profiles-new", newDir}, "-profiles-old: "},
		{[]string{"-profiles-old", oldDir, "-profiles-new", filepath.Join(newDir, "missing")}, "-profiles-new: "},
	} {
		var out, errOut bytes.Buffer
		if code := run(append(c.args, old, nw), &out, &errOut); code != 2 || !strings.Contains(errOut.String(), c.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", c.args, code, errOut.String(), c.want)
		}
	}
	var errOut bytes.Buffer
	if code := run([]string{"-plan", "-profiles-old", oldDir, old}, &bytes.Buffer{}, &errOut); code != 2 || !strings.Contains(errOut.String(), "-profiles-old") {
		t.Errorf("-plan with -profiles-old: exit %d, %q", code, errOut.String())
	}

	// -profile-comm keeps the threads it matches: the fixture's are all
	// "fixture".
	out, _ := compareRun(t, "-profiles-old", oldDir, "-profiles-new", newDir, "-profile-comm", "^fixture$", old, nw)
	if !strings.Contains(out, "samples of the threads whose comm matches ^fixture$") || !strings.Contains(firstFunctionLine(out[strings.Index(out, "perf-profile seccompbench"):]), injected) {
		t.Errorf("-profile-comm ^fixture$: %s", out)
	}

}

// TestProfileDiluted runs kbcompare on profdelta's diluted fixture,
// in which the injected function balloons to about 85% of the new side's
// samples and dilutes every other's share: the injected function leads
// the section, which is ordered per op.
func TestProfileDiluted(t *testing.T) {
	old, nw, _, _ := profileFixture(t)
	oldDir, newDir := "../../profdelta/testdata/diluted/old", "../../profdelta/testdata/diluted/new"
	flags := []string{"-profiles-old", oldDir, "-profiles-new", newDir}
	out, _ := compareRun(t, append(append([]string{"-format", "json"}, flags...), old, nw)...)
	var m abreport.AB
	if err := json.Unmarshal([]byte(out), &m); err != nil || len(m.Profiles) != 1 {
		t.Fatalf("json: %v, %d profiles", err, len(m.Profiles))
	}
	mp := m.Profiles[0]
	if len(mp.Self) < 3 || mp.Self[0].Name != injected {
		t.Fatalf("json: self %+v; want %s first", mp.Self, injected)
	}
	if s := mp.Self[1]; s.Change >= 0 || s.PerOp.Q <= 0.05 {
		t.Errorf("json: second self function %+v: want a share that fell and a cost per op within noise", s)
	}
	brief, _ := compareRun(t, append(append([]string{"-format", "brief"}, flags...), old, nw)...)
	// The brief form merges the forms: the injected function's caller
	// do_syscall_64, whose stacks hold it, may come first with children.
	sec := brief[strings.Index(brief, "perf-profile seccompbench"):]
	if first := firstFunctionLine(sec); !strings.Contains(first, injected) && !strings.Contains(first, "do_syscall_64") {
		t.Errorf("brief: first function line %q, want %s or its caller", first, injected)
	}
	if !strings.Contains(sec, "self  ") || !strings.Contains(sec, injected) {
		t.Errorf("brief: %s not listed:\n%s", injected, sec)
	}
}
