//go:build linux

// Package gotool finds the Go toolchain and the module's source for tests
// that build or run Go code (go build, go test -c), and skips them, naming
// what is missing, where either is absent: a test binary copied to
// another machine, or run in a VM guest by go test -exec vmexec, has
// neither.
package gotool

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/kbench/kbench/internal/skip"
)

// Go returns the go command for tb: the one on PATH (go test puts its own
// toolchain there), else GOROOT/bin/go of the toolchain that built the
// test binary. It skips tb when there is none, or when no go.mod is found
// in the working directory or above it (the module's source is not here,
// so there is nothing to build).
func Go(tb testing.TB) string {
	tb.Helper()
	cmd, err := exec.LookPath("go")
	if err != nil {
		cmd = filepath.Join(goroot(), "bin", "go")
		if _, serr := os.Stat(cmd); serr != nil {
			skip.Nowf(tb, "needs the Go toolchain, which is not here (no go on PATH: %v; no %s): install Go or run the test where it is, with go test rather than a copied test binary or go test -exec vmexec", err, cmd)
		}
	}
	if _, err := ModuleRoot(); err != nil {
		skip.Nowf(tb, "needs the module's source to build from: %v; run the test in a checkout of the module", err)
	}
	return cmd
}

// goroot is runtime.GOROOT, replaced in tests.
var goroot = runtime.GOROOT

// ModuleRoot returns the nearest directory at or above the working
// directory that holds a go.mod.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", &os.PathError{Op: "find", Path: "go.mod in the working directory or above", Err: os.ErrNotExist}
		}
		dir = up
	}
}
