//go:build linux

package gotool

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGoFindsToolchain: in this checkout, run by go test, Go returns a
// command that runs.
func TestGoFindsToolchain(t *testing.T) {
	cmd := Go(t)
	out, err := exec.Command(cmd, "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("%s env GOMOD: %v", cmd, err)
	}
	if !strings.HasSuffix(strings.TrimSpace(string(out)), "go.mod") {
		t.Errorf("%s env GOMOD = %q, want a go.mod", cmd, out)
	}
}

// TestGoSkipsWithoutModule: outside any module, as in a VM guest that
// holds only the package's files, Go skips naming go.mod.
func TestGoSkipsWithoutModule(t *testing.T) {
	dir := t.TempDir()
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "go.mod")); err == nil {
		t.Skip("the temporary directory is inside a module")
	}
	t.Chdir(dir)
	// A go command to find, so that what is missing is the module only.
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "go"), []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	if root, err := ModuleRoot(); err == nil {
		t.Fatalf("ModuleRoot in %s = %s, want none", dir, root)
	}
	skipped, msg := runGo(t)
	if !skipped || !strings.Contains(msg, "go.mod") {
		t.Errorf("Go outside a module: skipped=%v, message %q; want a skip naming go.mod", skipped, msg)
	}
}

// TestGoSkipsWithoutToolchain: with no go on PATH and GOROOT pointing
// nowhere, Go skips naming it.
func TestGoSkipsWithoutToolchain(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	nogo := filepath.Join(t.TempDir(), "nogo")
	defer func(f func() string) { goroot = f }(goroot)
	goroot = func() string { return nogo }
	skipped, msg := runGo(t)
	if !skipped || !strings.Contains(msg, "needs the Go toolchain") {
		t.Errorf("Go without a toolchain: skipped=%v, message %q; want a skip naming the toolchain", skipped, msg)
	}
}

// recorder keeps the message of a Skip (skip.Nowf's).
type recorder struct {
	*testing.T
	msg string
}

func (r *recorder) Skip(args ...any) {
	r.msg = strings.TrimSpace(fmt.Sprint(args...))
	r.T.Skip(r.msg)
}

// runGo calls Go in a subtest and says whether it skipped, and with what.
func runGo(t *testing.T) (skipped bool, msg string) {
	t.Run("skip", func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		rec := &recorder{T: t}
		defer func() { msg = rec.msg }()
		Go(rec)
	})
	return skipped, msg
}
