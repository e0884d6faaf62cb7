//go:build linux

package procfs

import (
	"errors"
	"fmt"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

const fixture = `Name:	kbench.test
Umask:	0022
NoNewPrivs:	1
Seccomp:	2
Seccomp_filters:	9
SpeculationIndirectBranch:	conditional force disabled
`

func TestParseStatus(t *testing.T) {
	s := ParseStatus("fixture", []byte(fixture))
	if n, err := s.Int("Seccomp_filters"); err != nil || n != 9 {
		t.Errorf("Seccomp_filters = %d, %v; want 9", n, err)
	}
	if n, err := s.Octal("Umask"); err != nil || n != 0o22 {
		t.Errorf("Umask = %o, %v; want 22", n, err)
	}
	if v, err := s.String(IndirectBranch); err != nil || v != "conditional force disabled" {
		t.Errorf("%s = %q, %v", IndirectBranch, v, err)
	}
	if _, err := s.Int("Name"); err == nil {
		t.Error("Int(Name) accepted a non-number")
	}
}

func TestMissingField(t *testing.T) {
	// A 5.4 kernel prints no Seccomp_filters line.
	s := ParseStatus("fixture", []byte("Seccomp:\t0\n"))
	if _, err := s.Int("Seccomp_filters"); !errors.Is(err, ErrMissing) {
		t.Fatalf("err = %v, want ErrMissing", err)
	}
}

func TestThreadSelf(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	s, err := ThreadSelf()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Int("Seccomp"); err != nil {
		t.Fatal(err)
	}
	if _, err := MainThread(); err != nil {
		t.Fatal(err)
	}
}

// TestIndirectBranchLine checks the line's name on this machine: every
// x86 kernel since 5.11 prints it.
func TestIndirectBranchLine(t *testing.T) {
	if runtime.GOARCH != "amd64" && runtime.GOARCH != "386" {
		t.Skip("the line is printed on x86 only")
	}
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		t.Fatal(err)
	}
	var major, minor int
	fmt.Sscanf(unix.ByteSliceToString(u.Release[:]), "%d.%d", &major, &minor)
	if major < 5 || major == 5 && minor < 11 {
		t.Skipf("Linux %d.%d predates the %s line (5.11)", major, minor, IndirectBranch)
	}
	s, err := ThreadSelf()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.String(IndirectBranch); err != nil {
		t.Fatalf("Linux %d.%d: %v", major, minor, err)
	}
}
