//go:build linux

package sockfdbench

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/limits"
	"github.com/kbench/kbench/internal/skip"
	"golang.org/x/sys/unix"
)

func TestMakePlan(t *testing.T) {
	for _, tc := range []struct {
		name             string
		nofile           uint64
		open, fds, pairs int
		root             bool
		perConn, badFD   int
	}{
		// stress-ng as root: (limit - open - 64) / instances.
		{"root one instance", 20000, 10, 1, 1, true, 19926, 20001},
		{"root two instances", 20000, 10, 1, 2, true, 9963, 20001},
		{"root whole messages", 20000, 10, 16, 2, true, 9952, 20001},
		// Unprivileged stress-ng does not divide; headroom stays free.
		{"user", 1024, 10, 1, 4, false, 1006, 1025},
		{"user 253", 1024, 10, 253, 1, false, 759, 1025},
		// Low limits adapt down to one message a connection.
		{"low", 40, 10, 16, 1, false, 16, 41},
		{"root low", 100, 10, 1, 8, true, 3, 101},
		{"root tiny", 30, 10, 1, 8, true, 1, 31},
		// A huge limit is capped like stress-ng's 1M.
		{"huge", 1 << 30, 10, 1, 1, false, maxPerConn, 1<<30 + 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := makePlan(tc.nofile, tc.open, tc.fds, tc.pairs, tc.root)
			if err != nil {
				t.Fatal(err)
			}
			if p.perConn != tc.perConn || p.badFD != tc.badFD {
				t.Errorf("plan %+v, want perConn %d badFD %d", p, tc.perConn, tc.badFD)
			}
			if p.perConn%tc.fds != 0 || p.perConn < tc.fds || p.perConn > int(tc.nofile)-tc.open-headroom {
				t.Errorf("perConn %d is not whole messages of %d fds within %d free slots", p.perConn, tc.fds, int(tc.nofile)-tc.open-headroom)
			}
		})
	}
}

func TestMakePlanTooLow(t *testing.T) {
	_, err := makePlan(256, 10, scmMaxFD, 1, false)
	if !errors.Is(err, skip.ErrNotSupported) {
		t.Fatalf("253 fds with RLIMIT_NOFILE 256: %v, want a skip (ErrNotSupported)", err)
	}
	for _, want := range []string{"RLIMIT_NOFILE", "256", "ulimit -n", "271"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q does not name %q", err, want)
		}
	}
	if _, err := makePlan(1024, 10, 0, 1, false); err == nil || errors.Is(err, skip.ErrNotSupported) {
		t.Errorf("0 fds per message: %v, want a plain error", err)
	}
}

// lowerNofile sets the soft RLIMIT_NOFILE to cur for the rest of the test.
func lowerNofile(t *testing.T, cur uint64) {
	t.Helper()
	var old unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	if cur > old.Cur {
		t.Skipf("soft RLIMIT_NOFILE is already %d, below the %d the test sets", old.Cur, cur)
	}
	low := old
	low.Cur = cur
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &low); err != nil {
		t.Fatalf("setrlimit(RLIMIT_NOFILE, %d): %v", cur, err)
	}
	t.Cleanup(func() {
		if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &old); err != nil {
			t.Errorf("restoring RLIMIT_NOFILE to %d: %v", old.Cur, err)
		}
	})
}

// A low RLIMIT_NOFILE makes the run hold fewer fds per connection (and
// reconnect more), or skip with the limit named when one message does not
// fit; it never fails midway.
func TestLowNofile(t *testing.T) {
	open, err := limits.OpenFds()
	if err != nil {
		t.Fatal(err)
	}
	// Room for the pairs' listeners and 40 fds a connection.
	limit := uint64(open + 2 + headroom + 40)
	lowerNofile(t, limit)
	for _, kind := range []Kind{KindFile, KindUnix} {
		for _, pairs := range []int{1, 2} {
			res, err := Run(Config{Kind: kind, FdsPerMsg: 16, Pairs: pairs, Ops: 200})
			if err != nil {
				t.Fatalf("kind=%s pairs=%d with RLIMIT_NOFILE %d: %v", kind, pairs, limit, err)
			}
			if res.PerConn < 16 || res.PerConn > 40 {
				t.Errorf("kind=%s pairs=%d: %d fds a connection with RLIMIT_NOFILE %d and %d open, want 16-40", kind, pairs, res.PerConn, limit, open)
			}
			if min := 200 * 16 / res.PerConn; res.Connections < int64(min) {
				t.Errorf("kind=%s pairs=%d: %d connections for 200 ops of 16 fds at %d a connection, want at least %d", kind, pairs, res.Connections, res.PerConn, min)
			}
		}
	}
	_, err = Run(Config{Kind: KindFile, FdsPerMsg: scmMaxFD, Pairs: 1, Ops: 10})
	if !errors.Is(err, skip.ErrNotSupported) || !strings.Contains(err.Error(), "RLIMIT_NOFILE") {
		t.Fatalf("253 fds a message with RLIMIT_NOFILE %d: %v, want a skip naming RLIMIT_NOFILE", limit, err)
	}
}

func TestCountFds(t *testing.T) {
	before, err := limits.OpenFds()
	if err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	during, err := limits.OpenFds()
	unix.Close(fd)
	if err != nil {
		t.Fatal(err)
	}
	after, err := limits.OpenFds()
	if err != nil {
		t.Fatal(err)
	}
	if during != before+1 || after != before {
		t.Fatalf("fd counts %d, %d with one more open, %d after closing it", before, during, after)
	}
}

// TestPlannedPerConn checks that the fingerprint's fds per connection are
// what Run then holds, serial and parallel.
func TestPlannedPerConn(t *testing.T) {
	for _, pairs := range []int{1, 2} {
		want, err := plannedPerConn(16, pairs)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Run(Config{Kind: KindFile, FdsPerMsg: 16, Pairs: pairs, Ops: 10})
		if err != nil {
			t.Fatal(err)
		}
		if res.PerConn != want {
			t.Errorf("pairs=%d: planned %d fds per connection, Run held up to %d", pairs, want, res.PerConn)
		}
	}
	s := PerConnSummary(2)
	if !strings.HasPrefix(s, "serial: fds=1 ") || !strings.Contains(s, "; parallel (2 pairs): fds=1 ") || strings.Count(s, "fds=") != 6 {
		t.Errorf("summary %q", s)
	}
}

// TestLowFdLimit runs the rows of 16 and 253 fds per message under ulimit
// -n 24: each must skip naming RLIMIT_NOFILE. (At 32 the 16-fd row fits
// where the binary starts with 8 fds open, as in a vmexec guest: 8 + 8
// headroom + 16.)
func TestLowFdLimit(t *testing.T) {
	limits.SkipsUnderNofile(t, 24, "^BenchmarkSockfd$/^shape=stress-ng$/^kind=file$/^fds=(16|253)$/^run=serial$")
}

// TestLowFdLimitKept runs the 16-fd row under ulimit -n 40, where it
// fits: its first trial starts the sides (the fd and task checks), and the
// later trials of the row and of a second count run on those sides with
// their fds open, without failing or skipping.
func TestLowFdLimitKept(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/sh", "-c", `ulimit -n 40 || exit 97; exec "$@"`, "sh", exe, "-test.run=^$",
		"-test.bench=^BenchmarkSockfd$/^shape=stress-ng$/^kind=file$/^fds=16$/^run=serial$", "-test.benchtime=300x", "-test.count=2", "-test.v=true")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("under ulimit -n 40: %v\n%s", err, out)
	}
	if n := strings.Count(string(out), " ns/op"); n != 2 || strings.Contains(string(out), "--- SKIP") || strings.Contains(string(out), "--- FAIL") {
		t.Fatalf("under ulimit -n 40, want 2 results and no skip or failure, got %d results:\n%s", n, out)
	}
}
