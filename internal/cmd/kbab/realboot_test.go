//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// kernelEnv names a kernel image for the real-boot test (CI sets it).
const kernelEnv = "KBENCH_VM_KERNEL"

// TestRealBoots runs kbab with the real vmexec, built from the module,
// and its in-process comparison, for one boot a side of a cheap seccompbench row: B's
// cmdline carries a marker, so each file must show its own kernel's
// cmdline and a boot id of its own.
func TestRealBoots(t *testing.T) {
	img := os.Getenv(kernelEnv)
	if img == "" {
		t.Skipf("set %s to a kernel image (bzImage or vmlinuz) to boot it in QEMU through vmexec", kernelEnv)
	}
	if noGo != "" {
		t.Skip(noGo)
	}
	img, _ = filepath.Abs(img)
	out := filepath.Join(t.TempDir(), "out")
	t.Chdir(filepath.Join(pkgDir, "..", "..", ".."))
	args := []string{"-out", out, "-boots", "1", "-smp", "2", "-a-kernel", img, "-b-kernel", img, "-b-append", "kbab.marker=b",
		"--", "./seccompbench", "-run=^$", "-bench=^BenchmarkSyscall$/^work=getpid$/^kind=cached$/^filters=0$", "-benchtime=20x"}
	stdout, stderr := tempFile(t), tempFile(t)
	code := run(args, stdout, stderr, nil)
	// One sample a side cannot be significant: nothing is worse.
	if code != 0 {
		t.Fatalf("kbab exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, readAll(t, stdout), readAll(t, stderr))
	}
	var ids []string
	for _, s := range []string{"A", "B"} {
		p := filepath.Join(out, s+".txt")
		b, err := os.ReadFile(p)
		got := bootIDs(b)
		if err != nil || len(got) != 1 {
			t.Fatalf("%s: boot ids %v (%v), want one", p, got, err)
		}
		ids = append(ids, got[0])
		marked := strings.Contains(string(b), "kbab.marker=b")
		if marked != (s == "B") {
			t.Errorf("%s: cmdline marker present %v, want %v", p, marked, s == "B")
		}
		if !strings.Contains(string(b), "BenchmarkSyscall/work=getpid/kind=cached/filters=0") {
			t.Errorf("%s has no result row:\n%s", p, b)
		}
	}
	if ids[0] == ids[1] {
		t.Errorf("A and B printed the same boot id %s", ids[0])
	}
}
