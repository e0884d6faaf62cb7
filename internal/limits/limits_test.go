//go:build linux

package limits

import (
	"errors"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/skip"
	"golang.org/x/sys/unix"
)

func TestCheckFds(t *testing.T) {
	if err := CheckFds("a row", 64, 20, 44, "why"); err != nil {
		t.Errorf("20 open + 44 under 64: %v", err)
	}
	err := CheckFds("16 flows", 64, 20, 45, "16 flows x 7")
	if !errors.Is(err, skip.ErrNotSupported) {
		t.Fatalf("20 open + 45 under 64: %v, want a skip", err)
	}
	for _, want := range []string{"RLIMIT_NOFILE", "16 flows", "needs 65", "20 open now + 45: 16 flows x 7", "has 64", "ulimit -n 65"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
}

func TestTasksFit(t *testing.T) {
	if err := tasksFit("a row", 100, 90, 10, "why"); err != nil {
		t.Errorf("90 + 10 under 100: %v", err)
	}
	err := tasksFit("32 children", 100, 90, 11, "32 x 3")
	if !errors.Is(err, skip.ErrNotSupported) || !strings.Contains(err.Error(), "RLIMIT_NPROC") || !strings.Contains(err.Error(), "ulimit -u 101") {
		t.Errorf("90 + 11 under 100: %v", err)
	}
}

// TestUsed checks the fd count against fds opened and closed here, and
// that fds above the limit asked about are left out.
func TestUsed(t *testing.T) {
	before, err := OpenFds()
	if err != nil {
		t.Fatal(err)
	}
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	high, err := unix.FcntlInt(uintptr(p[0]), unix.F_DUPFD_CLOEXEC, 1000)
	if err != nil {
		t.Fatal(err)
	}
	now, err := OpenFds()
	below, err2 := Used(1000)
	unix.Close(p[0])
	unix.Close(p[1])
	unix.Close(high)
	if err != nil || err2 != nil {
		t.Fatal(err, err2)
	}
	if now != before+3 {
		t.Errorf("OpenFds: %d before, %d with a pipe and a copy, want %d", before, now, before+3)
	}
	if below != now-1 {
		t.Errorf("Used(1000) = %d with fd %d open, want %d", below, high, now-1)
	}
}

func TestCheckSkips(t *testing.T) {
	for _, ok := range []string{
		"BenchmarkA\nBenchmarkA/x=1\n    a.go:1: RLIMIT_NOFILE too low for x\n--- SKIP: BenchmarkA/x=1\nPASS\n",
		"=== RUN TestA\n--- SKIP: TestA\n    a.go:1: RLIMIT_NOFILE too low for x\nPASS\n",
	} {
		if n, err := checkSkips([]byte(ok)); n != 1 || err != nil {
			t.Errorf("one RLIMIT_NOFILE skip: %d, %v", n, err)
		}
	}
	for name, out := range map[string]string{
		"other skip": "--- SKIP: BenchmarkA/x=1\n    a.go:1: no IPv6\nPASS\n",
		"ran":        "--- SKIP: BenchmarkA/x=1\n    a.go:1: RLIMIT_NOFILE\nBenchmarkA/x=2-2  1  100 ns/op\nPASS\n",
		"failed":     "--- FAIL: BenchmarkA/x=1\n    a.go:1: EMFILE\nFAIL\n",
		"none":       "PASS\n",
	} {
		if _, err := checkSkips([]byte(out)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestUsedFull fills the fd table up to a lowered soft limit: Used must
// count it as full rather than fail to look, and Fds must report the
// shortfall.
func TestUsedFull(t *testing.T) {
	var old unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	open, err := Used(64)
	if err != nil {
		t.Fatal(err)
	}
	lim := unix.Rlimit{Cur: uint64(open + 4), Max: old.Max}
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	var fds []int
	for {
		fd, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			break
		}
		fds = append(fds, fd)
	}
	n, uerr := Used(lim.Cur)
	ferr := Fds("a row", 1, "one more")
	for _, fd := range fds {
		unix.Close(fd)
	}
	unix.Setrlimit(unix.RLIMIT_NOFILE, &old)
	if uerr != nil || n != int(lim.Cur) {
		t.Errorf("Used(%d) of a full table = %d, %v; want %d", lim.Cur, n, uerr, lim.Cur)
	}
	if !errors.Is(ferr, skip.ErrNotSupported) {
		t.Errorf("Fds of a full table: %v, want a Shortfall", ferr)
	}
}

// TestTasksExempt: the kernel does not hold root to RLIMIT_NPROC, so
// neither does Tasks, however low the limit.
func TestTasksExempt(t *testing.T) {
	if unix.Getuid() != 0 {
		t.Skip("needs root: checks that root is exempt")
	}
	var old unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NPROC, &old); err != nil {
		t.Fatal(err)
	}
	low := unix.Rlimit{Cur: 1, Max: old.Max}
	if err := unix.Setrlimit(unix.RLIMIT_NPROC, &low); err != nil {
		t.Fatal(err)
	}
	err := Tasks("a row", 1000, "1000 threads")
	limited := TasksLimited()
	unix.Setrlimit(unix.RLIMIT_NPROC, &old)
	if err != nil || limited {
		t.Errorf("as root under RLIMIT_NPROC 1: Tasks = %v, TasksLimited = %v; want nil, false", err, limited)
	}
}
