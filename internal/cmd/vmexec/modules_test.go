//go:build linux

package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestModulesUsrLib: a package unpacked from trixie has its modules in
// usr/lib/modules, not lib/modules (the kernel matrix's 6.12).
func TestModulesUsrLib(t *testing.T) {
	for _, lib := range []string{"lib", "usr/lib"} {
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, "boot"), 0o755)
		img := fakeImage(t, filepath.Join(dir, "boot"), 4096)
		want := filepath.Join(dir, lib, "modules", "0.0-fake")
		os.MkdirAll(want, 0o755)
		if got := modulesFor(img); got != want {
			t.Errorf("%s: modulesFor = %q, want %q", lib, got, want)
		}
	}
}
