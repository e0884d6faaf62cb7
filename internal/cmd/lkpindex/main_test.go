//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The committed files are what the generator writes now.
func TestCommittedFilesCurrent(t *testing.T) {
	if err := run("../../../lkp", true); err != nil {
		t.Fatal(err)
	}
}

func TestWriteThenCheck(t *testing.T) {
	dir := t.TempDir()
	if err := run(dir, true); err == nil {
		t.Fatal("check passed on an empty folder")
	}
	if err := run(dir, false); err != nil {
		t.Fatal(err)
	}
	if err := run(dir, true); err != nil {
		t.Fatalf("check after write: %v", err)
	}
	perf, err := os.ReadFile(filepath.Join(dir, "etc/index-perf-all.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(perf), `kbench\..+\.loops\/s: 1`+"\n") {
		t.Errorf("index-perf-all.yaml lacks the loops/s line:\n%s", perf)
	}
	path := filepath.Join(dir, "etc/index-latency-all.yaml")
	if err := os.WriteFile(path, []byte("stale\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(dir, true); err == nil || !strings.Contains(err.Error(), "index-latency-all.yaml") {
		t.Errorf("check of a stale file: %v", err)
	}
}
