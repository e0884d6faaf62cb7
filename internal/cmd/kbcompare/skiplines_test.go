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
	"github.com/kbench/kbench/internal/gotool"
)

// TestSkipLines: a real benchmark (testdata/skiprow) whose row kind=a
// skips on the new side only, by an environment variable, and whose row
// kind=both skips on both, run without -v: kbcompare on the two outputs
// exits 1 and names the row that skipped on one side with its reason,
// and lists the row that skipped on both once, with both reasons, as no
// failure.
func TestSkipLines(t *testing.T) {
	goCmd := gotool.Go(t)
	root, err := gotool.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bench := func(name string, env ...string) string {
		cmd := exec.Command(goCmd, "test", "-run=^$", "-bench=.", "-benchtime=100x", "-count=3", "./internal/cmd/kbcompare/testdata/skiprow")
		cmd.Dir, cmd.Env = root, append(os.Environ(), env...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, out)
		}
		if bytes.Contains(out, []byte("--- SKIP")) {
			t.Fatalf("%s: go test printed --- SKIP without -v:\n%s", name, out)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	old, nw := bench("old.txt"), bench("new.txt", "SKIPROW_SKIP=1")

	var out, errOut bytes.Buffer
	if code := run([]string{old, nw}, &out, &errOut); code != 1 {
		t.Errorf("exit %d, want 1 (a row skipped on one side)\n%s%s", code, out.String(), errOut.String())
	}
	text := strings.Join(strings.Fields(out.String()), " ") // unwrapped
	for _, want := range []string{
		"skipped: skiprow Row/kind=a-", "skipped in new (" + nw + ":",
		"SKIPROW_SKIP=1: the feature is gone",
		"skipped, no results on either side: skiprow Row/kind=both: skipped in old (" + old + ":",
		"): never runs here; skipped in new (" + nw + ":",
		"0 failed, 1 skipped on one side, 0 other failures",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
	if n := strings.Count(text, "Row/kind=both"); n != 1 {
		t.Errorf("Row/kind=both named %d times, want once:\n%s", n, out.String())
	}

	out.Reset()
	if code := run([]string{"-format", "json", old, nw}, &out, &errOut); code != 1 {
		t.Errorf("-format json: exit %d, want 1", code)
	}
	var m abreport.AB
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	if m.Summary.Skipped != 1 || len(m.Skips) != 1 || m.Skips[0].Name != "Row/kind=both" || m.Skips[0].Why[0] == "" || m.Skips[0].Why[1] == "" {
		t.Errorf("json: skipped %d, skips %+v", m.Summary.Skipped, m.Skips)
	}

	// Both sides skipping kind=both only: listed, exit 0.
	out.Reset()
	if code := run([]string{old, old}, &out, &errOut); code != 0 || !strings.Contains(out.String(), "Row/kind=both") {
		t.Errorf("old against old: exit %d, want 0, with kind=both listed:\n%s", code, out.String())
	}
}
