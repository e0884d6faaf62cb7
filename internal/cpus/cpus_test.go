//go:build linux

package cpus

import (
	"slices"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/thread"
)

func TestParseList(t *testing.T) {
	for in, want := range map[string][]int{
		"0":         {0},
		"0-3":       {0, 1, 2, 3},
		"0-1,4,6-7": {0, 1, 4, 6, 7},
		"8,0-1":     {0, 1, 8},
		"0-1,1-2":   {0, 1, 2},
	} {
		got, err := ParseList(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("ParseList(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "a", "3-1", "-1", "0-", "1,,2"} {
		if _, err := ParseList(bad); err == nil {
			t.Errorf("ParseList(%q) accepted", bad)
		}
	}
}

func TestPinEveryUsableCPU(t *testing.T) {
	usable, err := Usable()
	if err != nil {
		t.Fatal(err)
	}
	if len(usable) == 0 {
		t.Fatal("no usable CPU")
	}
	for _, c := range usable {
		if err := thread.Run(func() error { return Pin(c) }); err != nil {
			t.Errorf("CPU %d: %v", c, err)
		}
	}
}

func TestPinDetectsWrongCPU(t *testing.T) {
	usable, err := Usable()
	if err != nil {
		t.Fatal(err)
	}
	if len(usable) < 2 {
		t.Skipf("needs 2 usable CPUs to pin to one and verify another, have %v", usable)
	}
	err = thread.Run(func() error {
		if err := Pin(usable[0]); err != nil {
			return err
		}
		return Verify(usable[1])
	})
	if err == nil || !strings.Contains(err.Error(), "want exactly CPU") {
		t.Fatalf("Verify of the wrong CPU returned %v", err)
	}
}

func TestPinRejectsOfflineCPU(t *testing.T) {
	err := thread.Run(func() error { return Pin(100000) })
	if err == nil {
		t.Fatal("pinning to CPU 100000 succeeded")
	}
}
