//go:build linux

package prctlbench

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kbench/kbench/internal/child"
	"github.com/kbench/kbench/internal/cpus"
	"github.com/kbench/kbench/internal/limits"
	"github.com/kbench/kbench/internal/procfs"
	"github.com/kbench/kbench/internal/skip"
)

func TestPingPongSwitchesEveryRoundTrip(t *testing.T) {
	for _, shared := range []bool{false, true} {
		t.Run(fmt.Sprintf("shared=%v", shared), func(t *testing.T) { testPingPongSwitches(t, shared) })
	}
}

func testPingPongSwitches(t *testing.T, shared bool) {
	usable := limits.NeedCPUs(t, "two sides pinned to CPUs of their own", 2)
	skip.NeedProcs(t, 2, runtime.GOMAXPROCS(0))
	fds := countFds(t)
	const n = 2000
	var calls []string
	switches, err := runPingPong(usable[0], usable[1], n, shared,
		func() { calls = append(calls, "started") }, func() { calls = append(calls, "stopped") })
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(calls, []string{"started", "stopped"}) {
		t.Errorf("calls %v, want started then stopped", calls)
	}
	if switches < 0 {
		t.Skip("no voluntary_ctxt_switches in /proc/thread-self/status")
	}
	if switches < n {
		t.Errorf("%d voluntary switches for %d round trips", switches, n)
	}
	t.Logf("%d round trips, %d voluntary context switches", n, switches)
	if after := countFds(t); after != fds {
		t.Errorf("fds: %d before, %d after", fds, after)
	}
}

func TestPingPongDetectsWrongEcho(t *testing.T) {
	p, err := newPingPong()
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	// The fds are read here: the pipe orders the echo before p.close, but
	// the race detector cannot see that through raw read and write calls.
	in, out := p.toPong[0], p.toPing[1]
	go func() {
		if expect(in, 0) == nil {
			put(out, 41) // not the 0 that was sent
		}
	}()
	if err := p.ping(3); err == nil || !strings.Contains(err.Error(), "read counter 41, want 0") {
		t.Fatalf("wrong echo not detected: %v", err)
	}
}

// TestPingPongFailedPinDoesNotHang pins one side to a CPU that does not
// exist; the other must see the pipe close and return.
func TestPingPongFailedPinDoesNotHang(t *testing.T) {
	usable, err := cpus.Usable()
	if err != nil {
		t.Fatal(err)
	}
	for _, shared := range []bool{false, true} {
		_, err = runPingPong(usable[0], 1<<12, 10, shared, nil, nil)
		if err == nil || !strings.Contains(err.Error(), "sched_setaffinity") {
			t.Fatalf("shared=%v: err = %v, want the failed pin", shared, err)
		}
	}
}

// A pong process killed in the middle fails the run, saying so, and
// leaves no process.
func TestPingPongKilledSideFails(t *testing.T) {
	usable := limits.NeedCPUs(t, "two sides pinned to CPUs of their own", 2)
	kill := func() {
		time.Sleep(50 * time.Millisecond)
		pids, err := child.Children()
		if err != nil || len(pids) == 0 {
			t.Errorf("no child process to kill: %v (%v)", pids, err)
			return
		}
		unix.Kill(pids[0], unix.SIGKILL)
	}
	// Bounded (seconds of round trips), so that a kill that finds no
	// child ends in a failure rather than a hang.
	_, err := runPingPong(usable[0], usable[1], 1<<18, false, func() { go kill() }, nil)
	if err == nil || !strings.Contains(err.Error(), "SIGKILL") {
		t.Fatalf("side killed mid-run: %v, want an error naming SIGKILL", err)
	}
	if left, err := child.Children(); err != nil || len(left) != 0 {
		t.Fatalf("processes left: %v (%v)", left, err)
	}
}

// TestPingPongSwitchReadErrors: a status file that cannot be read, or
// whose count is not a number, fails the run; only a kernel that prints
// no voluntary_ctxt_switches line gives -1 (the check skipped, with a
// note). readStatus is substituted in this process, so the sides run as
// threads; the processes' sides count through the same countSwitches.
func TestPingPongSwitchReadErrors(t *testing.T) {
	usable := limits.NeedCPUs(t, "two sides pinned to CPUs of their own", 2)
	saved := readStatus
	t.Cleanup(func() { readStatus = saved })
	for _, c := range []struct {
		name   string
		read   func() (*procfs.Status, error)
		errSub string // "" = no error, switches -1
	}{
		{"unreadable", func() (*procfs.Status, error) { return nil, errors.New("EMFILE") }, "EMFILE"},
		{"not a number", func() (*procfs.Status, error) {
			return procfs.ParseStatus("status", []byte("voluntary_ctxt_switches:\tlots\n")), nil
		}, "not a number"},
		{"no such line", func() (*procfs.Status, error) { return procfs.ParseStatus("status", []byte("Name:\tx\n")), nil }, ""},
	} {
		readStatus = c.read
		switches, err := runPingPong(usable[0], usable[1], 10, true, nil, nil)
		switch {
		case c.errSub == "" && (err != nil || switches != -1):
			t.Errorf("%s: switches %d, err %v; want -1 and no error", c.name, switches, err)
		case c.errSub != "" && (err == nil || !strings.Contains(err.Error(), c.errSub)):
			t.Errorf("%s: switches %d, err %v; want an error naming %q", c.name, switches, err, c.errSub)
		}
	}
}

func countFds(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}
