//go:build linux

package abseries

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/abstat/sim"
)

// Read groups each kernel's boots by row: three kernels of the Syscall
// runs, three boots, two and three, the second's boots its own.
func TestRead(t *testing.T) {
	var paths, labels []string
	for k, n := range []int{3, 2, 3} {
		var boots []string
		for b := range n {
			boots = append(boots, fmt.Sprintf("%08x-0000-4000-8000-%012d", k+1, b+1))
		}
		paths = append(paths, sim.Assemble(t, fmt.Sprintf("k%d.txt", k), sim.BootFiles("a", boots, nil)...))
		labels = append(labels, fmt.Sprint("k", k))
	}
	s, err := Read(paths, labels)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Rows) != 1 || s.Rows[0].Name != sim.SyscallRow || s.Rows[0].Unit != "sec/op" || s.Rows[0].Better != -1 {
		t.Fatalf("rows %+v, want the Syscall row in sec/op", s.Rows)
	}
	m := s.Medians()[0]
	if len(m) != 3 || len(m[0]) != 3 || len(m[1]) != 2 || len(m[2]) != 3 || m[0][1] != m[2][1] {
		t.Errorf("medians %v: want 3, 2 and 3 boots, kernels 0 and 2 alike", m)
	}
	if _, err := Read(paths[:1], labels[:1]); err == nil {
		t.Error("one file: no error")
	}
	if _, err := Read(paths, labels[:2]); err == nil {
		t.Error("a label short: no error")
	}
}

// TestReadSameBootTwice: one file given as two kernels (the same boot
// ids in both) is refused, naming the boot and both files.
func TestReadSameBootTwice(t *testing.T) {
	f := sim.File(t, sim.SuiteFile)
	_, err := Read([]string{f, f}, []string{"K1", "K2"})
	if err == nil || !strings.Contains(err.Error(), "is in "+f+" (K1) and in "+f+" (K2)") {
		t.Fatalf("Read of one file twice: %v, want a refusal naming the boot and both kernels", err)
	}
}
