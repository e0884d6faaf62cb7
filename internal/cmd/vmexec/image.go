//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/kbench/kbench/internal/vmflags"
)

func checkImage(path string) error { return vmflags.Kernel("-kernel", path) }

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// modulesFor finds the modules tree of an image in Debian's layout,
// DIR/boot/vmlinuz-V beside DIR/lib/modules/V, or DIR/usr/lib/modules/V
// as trixie's packages unpack; "" when there is none.
func modulesFor(image string) (dir, release string) {
	bootDir, base := filepath.Split(filepath.Clean(image))
	v, ok := strings.CutPrefix(base, "vmlinuz-")
	if !ok || filepath.Base(filepath.Clean(bootDir)) != "boot" {
		return "", ""
	}
	for _, lib := range []string{"lib", "usr/lib"} {
		if d := filepath.Join(filepath.Dir(filepath.Clean(bootDir)), lib, "modules", v); exists(d) {
			return d, v
		}
	}
	return "", ""
}
