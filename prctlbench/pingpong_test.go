package prctlbench

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kbench/kbench/internal/child"
	"github.com/kbench/kbench/internal/cpus"
	"github.com/kbench/kbench/internal/procstatus"
	"github.com/kbench/kbench/internal/skip"
)

func TestPingPongSwitchesEveryRoundTrip(t *testing.T) {
	for _, shared := range []bool{false, true} {
		t.Run(fmt.Sprintf("shared=%v", shared), func(t *testing.T) { testPingPongSwitches(t, shared) })
	}
}

func testPingPongSwitches(t *testing.T, shared bool) {
	usable, err := cpus.Usable()
	if err != nil {
		t.Fatal(err)
	}
	skip.NeedCPUs(t, 2, usable)
	skip.NeedProcs(t, 2, runtime.GOMAXPROCS(0))
	fds := countFds(t)
	const n = 2000
	started := false
	switches, err := runPingPong(usable[0], usable[1], n, shared, func() { started = true })
	if err != nil {
		t.Fatal(err)
	}
	if !started {
		t.Error("started was not called")
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
	go func() {
		if expect(p.toPong[0], 0) == nil {
			put(p.toPing[1], 41) // not the 0 that was sent
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
		_, err = runPingPong(usable[0], 1<<12, 10, shared, nil)
		if err == nil || !strings.Contains(err.Error(), "sched_setaffinity") {
			t.Fatalf("shared=%v: err = %v, want the failed pin", shared, err)
		}
	}
}

// A pong process killed in the middle fails the run, saying so, and
// leaves no process.
func TestPingPongKilledSideFails(t *testing.T) {
	usable, err := cpus.Usable()
	if err != nil {
		t.Fatal(err)
	}
	skip.NeedCPUs(t, 2, usable)
	kill := func() {
		time.Sleep(50 * time.Millisecond)
		if pids, _ := child.Children(); len(pids) > 0 {
			unix.Kill(pids[0], unix.SIGKILL)
		}
	}
	_, err = runPingPong(usable[0], usable[1], 1<<40, false, func() { go kill() })
	if err == nil || !strings.Contains(err.Error(), "SIGKILL") {
		t.Fatalf("side killed mid-run: %v, want an error naming SIGKILL", err)
	}
	if left, err := child.Children(); err != nil || len(left) != 0 {
		t.Fatalf("processes left: %v (%v)", left, err)
	}
}

// A status file that cannot be read or parsed fails the count; only a
// kernel without the line degrades it to -1.
func TestCountSwitchesErrors(t *testing.T) {
	defer func(f func() (int, error)) { readSwitches = f }(readSwitches)
	readSwitches = func() (int, error) { return -1, fmt.Errorf("x: %w", procstatus.ErrMissing) }
	if n, err := countSwitches(func() error { return nil }); n != -1 || err != nil {
		t.Errorf("missing line: %d, %v; want -1, nil", n, err)
	}
	readSwitches = func() (int, error) { return -1, errors.New(`voluntary_ctxt_switches: "x" is not a number`) }
	if _, err := countSwitches(func() error { return nil }); err == nil || !strings.Contains(err.Error(), "not a number") {
		t.Errorf("unparsable line: %v, want the error", err)
	}
	calls := 0
	readSwitches = func() (int, error) {
		if calls++; calls == 2 {
			return -1, errors.New("read /proc/thread-self/status: EIO")
		}
		return 5, nil
	}
	if _, err := countSwitches(func() error { return nil }); err == nil || !strings.Contains(err.Error(), "EIO") {
		t.Errorf("failed second read: %v, want the error", err)
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
