//go:build linux

package child_test

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/child"
	"github.com/kbench/kbench/internal/limits"
	"golang.org/x/sys/unix"
)

// startEcho starts a test-echo child inheriting both ends of a pipe.
func startEcho(t *testing.T) (*child.Proc, error) {
	t.Helper()
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	return child.Start(child.Spec{Role: "test-echo", Args: echoArgs{N: 1}, Fds: p[:]})
}

// TestFds checks ParentFds and StartFds against the kernel: a started
// child holds exactly ParentFds here, and a soft RLIMIT_NOFILE of exactly
// the fds open plus Fds(1, 2) (the pipe's two ends counted as open) lets
// Start through where one fewer makes it fail with EMFILE.
func TestFds(t *testing.T) {
	// A first child, so that what the runtime opens once (the netpoller's
	// epoll and its eventfd) is open before the counting.
	p, err := startEcho(t)
	if err != nil {
		t.Fatal(err)
	}
	p.Kill()
	before, err := limits.OpenFds()
	if err != nil {
		t.Fatal(err)
	}
	p, err = startEcho(t)
	if err != nil {
		t.Fatal(err)
	}
	during, err := limits.OpenFds()
	p.Kill()
	settled(t, before)
	if err != nil {
		t.Fatal(err)
	}
	if during-before != child.ParentFds {
		t.Errorf("a started child holds %d fds in the parent, ParentFds says %d", during-before, child.ParentFds)
	}

	var old unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	defer unix.Setrlimit(unix.RLIMIT_NOFILE, &old)
	// The pipe startEcho makes is 2 of the fds Fds(1, 2) counts as
	// inherited ones: they are open during Start.
	for _, tc := range []struct {
		slack int
		ok    bool
	}{{0, true}, {-1, false}} {
		settled(t, before)
		// The fds that take room under the limits set here (go test
		// may leave one of its own far above them).
		open, err := limits.Used(64)
		if err != nil {
			t.Fatal(err)
		}
		lim := unix.Rlimit{Cur: uint64(open + 2 + child.Fds(1, 2) + tc.slack), Max: old.Max}
		if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
			t.Fatal(err)
		}
		p, err := startEcho(t)
		unix.Setrlimit(unix.RLIMIT_NOFILE, &old)
		if p != nil {
			p.Kill()
		}
		switch {
		case tc.ok && err != nil:
			t.Errorf("soft limit %d (%d open + 2 for the pipe + Fds(1, 2) = %d): %v", lim.Cur, open, child.Fds(1, 2), err)
		case !tc.ok && (err == nil || !strings.Contains(err.Error(), syscall.EMFILE.Error())):
			t.Errorf("soft limit %d, one below the need: Start returned %v, want EMFILE", lim.Cur, err)
		}
	}
}

// settled waits until the fds open are back to want: a reaped child's
// pidfd is closed by the runtime on its own time. It returns the count.
func settled(t *testing.T, want int) int {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		n, err := limits.OpenFds()
		if err != nil {
			t.Fatal(err)
		}
		if n == want || time.Now().After(deadline) {
			return n
		}
	}
}

// TestTasks checks the probe's count against the floor any child has: a
// main thread, sysmon and the role's thread.
func TestTasks(t *testing.T) {
	n, err := child.Tasks()
	if err != nil {
		t.Fatal(err)
	}
	if n < 3 {
		t.Errorf("a child runs %d tasks once ready, want at least its main thread, sysmon and the role's thread", n)
	}
	t.Logf("a child runs %d tasks once ready", n)
}
