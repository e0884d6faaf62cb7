package prctlbench

import (
	"errors"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/cpus"
	"github.com/kbench/kbench/internal/procstatus"
	"github.com/kbench/kbench/internal/skip"
)

func TestPingPongSwitchesEveryRoundTrip(t *testing.T) {
	usable, err := cpus.Usable()
	if err != nil {
		t.Fatal(err)
	}
	skip.NeedCPUs(t, 2, usable)
	skip.NeedProcs(t, 2, runtime.GOMAXPROCS(0))
	fds := countFds(t)
	const n = 2000
	started := false
	switches, err := runPingPong(usable[0], usable[1], n, func() { started = true })
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
	_, err = runPingPong(usable[0], 1<<12, 10, nil)
	if err == nil || !strings.Contains(err.Error(), "sched_setaffinity") {
		t.Fatalf("err = %v, want the failed pin", err)
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

// TestPingPongSwitchReadErrors: a status file that cannot be read, or
// whose count is not a number, fails the run; only a kernel that prints
// no voluntary_ctxt_switches line gives -1 (the check skipped, with a
// note).
func TestPingPongSwitchReadErrors(t *testing.T) {
	usable, err := cpus.Usable()
	if err != nil {
		t.Fatal(err)
	}
	skip.NeedCPUs(t, 2, usable)
	saved := readStatus
	t.Cleanup(func() { readStatus = saved })
	for _, c := range []struct {
		name   string
		read   func() (*procstatus.Status, error)
		errSub string // "" = no error, switches -1
	}{
		{"unreadable", func() (*procstatus.Status, error) { return nil, errors.New("EMFILE") }, "EMFILE"},
		{"not a number", func() (*procstatus.Status, error) {
			return procstatus.Parse("status", []byte("voluntary_ctxt_switches:\tlots\n")), nil
		}, "not a number"},
		{"no such line", func() (*procstatus.Status, error) { return procstatus.Parse("status", []byte("Name:\tx\n")), nil }, ""},
	} {
		readStatus = c.read
		switches, err := runPingPong(usable[0], usable[1], 10, nil)
		switch {
		case c.errSub == "" && (err != nil || switches != -1):
			t.Errorf("%s: switches %d, err %v; want -1 and no error", c.name, switches, err)
		case c.errSub != "" && (err == nil || !strings.Contains(err.Error(), c.errSub)):
			t.Errorf("%s: switches %d, err %v; want an error naming %q", c.name, switches, err, c.errSub)
		}
	}
}
