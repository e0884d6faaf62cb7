//go:build linux

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestReadme keeps the front door true and short: README.md stays at
// most 8 KB (issue 45), and its report excerpt (the first code block
// under "## Reading the report") is kbcompare's text form of the
// boots-worse set, line for line but for the boot ids, which it
// shortens: a change to the text form that the README does not follow
// fails here.
func TestReadme(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(readme) > 8<<10 {
		t.Errorf("README.md is %d bytes, more than 8 KB: move what is not the front door to docs/", len(readme))
	}
	_, section, ok := bytes.Cut(readme, []byte("\n## Reading the report\n"))
	_, block, ok2 := bytes.Cut(section, []byte("\n```\n"))
	excerpt, _, ok3 := bytes.Cut(block, []byte("\n```\n"))
	if !ok || !ok2 || !ok3 {
		t.Fatal("README.md has no code block under \"## Reading the report\"")
	}
	golden, err := os.ReadFile(filepath.Join("testdata", "golden", "boots-worse", "text.golden"))
	if err != nil {
		t.Fatal(err)
	}
	report := strings.Split(string(golden), "\n")
	checked := 0
	for _, l := range strings.Split(string(excerpt), "\n") {
		if l == "" || strings.Contains(l, "boot_id") {
			continue
		}
		if !slices.Contains(report, l) {
			t.Errorf("README.md's excerpt line %q is not in kbcompare's report of testdata/golden/boots-worse", l)
		}
		checked++
	}
	if checked < 5 {
		t.Errorf("README.md's excerpt: %d lines checked, want the setup and a table", checked)
	}
}
