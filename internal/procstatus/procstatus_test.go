package procstatus

import (
	"errors"
	"runtime"
	"testing"
)

const fixture = `Name:	kbench.test
Umask:	0022
NoNewPrivs:	1
Seccomp:	2
Seccomp_filters:	9
Speculation_Indirect_Branch:	conditional force disabled
`

func TestParse(t *testing.T) {
	s := Parse("fixture", []byte(fixture))
	if n, err := s.Int("Seccomp_filters"); err != nil || n != 9 {
		t.Errorf("Seccomp_filters = %d, %v; want 9", n, err)
	}
	if n, err := s.Octal("Umask"); err != nil || n != 0o22 {
		t.Errorf("Umask = %o, %v; want 22", n, err)
	}
	if v, err := s.String("Speculation_Indirect_Branch"); err != nil || v != "conditional force disabled" {
		t.Errorf("Speculation_Indirect_Branch = %q, %v", v, err)
	}
	if _, err := s.Int("Name"); err == nil {
		t.Error("Int(Name) accepted a non-number")
	}
}

func TestMissingField(t *testing.T) {
	// A 5.4 kernel prints no Seccomp_filters line.
	s := Parse("fixture", []byte("Seccomp:\t0\n"))
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
