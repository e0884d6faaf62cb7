//go:build linux

package vmflags

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSMP(t *testing.T) {
	for _, in := range []string{"1", "2", "256"} {
		if err := checkSMP(in); err != nil {
			t.Errorf("checkSMP(%q): %v", in, err)
		}
	}
	for _, in := range []string{"0", "257", "999", "-1", "x", "", "2.5", " 2", "99999999999999999999"} {
		if err := checkSMP(in); err == nil || !strings.Contains(err.Error(), "-smp accepts 1-256 vCPUs") {
			t.Errorf("checkSMP(%q): %v, want an error naming -smp and 1-256", in, err)
		}
	}
}

func TestMemory(t *testing.T) {
	for _, in := range []string{"128M", "2G", "4096M", "1G"} {
		if err := checkMemory(in); err != nil {
			t.Errorf("checkMemory(%q): %v", in, err)
		}
	}
	for in, want := range map[string]string{
		"2048":                  "accepts a size in M or G",
		"2GB":                   "accepts a size in M or G",
		"2T":                    "accepts a size in M or G",
		"512K":                  "accepts a size in M or G",
		"0G":                    "accepts a size in M or G",
		"":                      "accepts a size in M or G",
		"64M":                   `accepts at least 128M: a guest needs that much (got "64M")`,
		"99999999999999999999G": "accepts a size in M or G",
		"9007199254740993G":     "accepts a size in M or G",
	} {
		if err := checkMemory(in); err == nil || !strings.Contains(err.Error(), "-memory") || !strings.Contains(err.Error(), want) {
			t.Errorf("checkMemory(%q): %v, want an error naming -memory and %q", in, err, want)
		}
	}
}

func TestAccel(t *testing.T) {
	for _, a := range []string{"auto", "kvm", "tcg"} {
		if err := Check("", "", a); err != nil {
			t.Errorf("Accel(%q): %v", a, err)
		}
	}
	for _, a := range []string{"hvf", "xen", "KVM", "tcg,thread=multi"} {
		if err := Check("", "", a); err == nil || !strings.Contains(err.Error(), "-accel accepts auto, kvm or tcg") {
			t.Errorf("Accel(%q): %v", a, err)
		}
	}
}

func TestAppend(t *testing.T) {
	for _, s := range []string{"", "nokaslr", "mitigations=off sysctl.net.core.bpf_jit_harden=2", "a=\"b c\"\tx", strings.Repeat("x", MaxAppend),
		// Keys that only start or end like vmexec's.
		"panic_on_warn=1", "oops=panic", "init=/sbin/init", "consoleblank=0", `a="panic=0"`} {
		if err := Append("-append", s, MaxAppend); err != nil {
			t.Errorf("Append(%.40q): %v", s, err)
		}
	}
	for s, want := range map[string]string{
		strings.Repeat("x", MaxAppend+1): "accepts at most 1791 bytes, of the x86 kernel command line's 2048 that vmexec leaves (got 1792 bytes)",
		"a\x00b":                         "control byte 0x00 at byte 1",
		"a\nb":                           "control byte 0x0a at byte 1",
		"\x7f":                           "control byte 0x7f at byte 0",
		// vmexec's own keys, as the kernel reads names and quotes.
		"rdinit=/bin/sh":        `vmexec's own (console, 8250.nr_uarts, panic, softlockup_panic, rdinit) (got "rdinit=/bin/sh": vmexec sets rdinit=/init itself)`,
		"nokaslr panic=0":       `(got "panic=0": vmexec sets panic=-1 itself)`,
		"softlockup-panic=0":    `(got "softlockup-panic=0": vmexec sets softlockup_panic=1 itself)`,
		"8250.nr-uarts=1":       `vmexec sets 8250.nr_uarts=4 itself`,
		"console=tty0":          `vmexec sets console=ttyS0,115200 itself`,
		`a="b c" "rdinit=/x y"`: `(got "rdinit=/x y": vmexec sets rdinit=/init itself)`,
		"panic":                 `(got "panic": vmexec sets panic=-1 itself)`,
	} {
		if err := Append("-append", s, MaxAppend); err == nil || !strings.Contains(err.Error(), "-append") || !strings.Contains(err.Error(), want) {
			t.Errorf("Append(%.40q): %v, want %q", s, err, want)
		}
	}
}

func TestKernel(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	header := func(version uint16) []byte {
		b := make([]byte, 4096)
		copy(b[0x202:], "HdrS")
		binary.LittleEndian.PutUint16(b[0x206:], version)
		return b
	}
	good := write("bzImage", header(0x020f))
	if err := Kernel("-kernel", good); err != nil {
		t.Errorf("a bzImage header: %v", err)
	}
	for p, want := range map[string]string{
		filepath.Join(dir, "none"):           "-a-kernel: open",
		dir:                                  "not a regular file",
		write("short", []byte("HdrS")):       "too short for a bzImage header",
		write("vmlinux", make([]byte, 4096)): `no bzImage header ("HdrS" at 0x202)`,
		write("old", header(0x0105)):         "boot protocol 0x105 is older than 2.00",
	} {
		if err := Kernel("-a-kernel", p); err == nil || !strings.Contains(err.Error(), "-a-kernel") || !strings.Contains(err.Error(), want) {
			t.Errorf("Kernel(%s): %v, want %q", p, err, want)
		}
	}
}

func TestGuest(t *testing.T) {
	if err := Check("", "", ""); err != nil {
		t.Errorf("vmexec's defaults: %v", err)
	}
	for g, want := range map[[3]string]string{
		{"999", "", ""}:     `-smp accepts 1-256 vCPUs (got "999")`,
		{"0", "2048", ""}:   `-smp accepts`,
		{"", "2048", "hvf"}: `-memory accepts a size in M or G`,
		{"", "", "hvf"}:     `-accel accepts auto, kvm or tcg (got "hvf")`,
	} {
		if err := Check(g[0], g[1], g[2]); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%+v: %v, want %q first", g, err, want)
		}
	}
}

func TestImageDigest(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "bzImage")
	if err := os.WriteFile(p, []byte("abc"), 0o644); err != nil {
		t.Fatal(err)
	}
	// SHA-256("abc"), FIPS 180-2's example.
	if got, err := ImageDigest(p); err != nil || got != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Errorf("ImageDigest = %q, %v; want abc's SHA-256", got, err)
	}
	if got, err := ImageDigest(dir); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("ImageDigest(a directory) = %q, %v; want is a directory", got, err)
	}
	if _, err := ImageDigest(filepath.Join(dir, "none")); err == nil {
		t.Error("ImageDigest(a missing file): no error")
	}
}
