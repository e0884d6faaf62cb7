//go:build linux

package sockfdbench

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/child"
	"github.com/kbench/kbench/internal/limits"
	"github.com/kbench/kbench/internal/peer"
	"golang.org/x/sys/unix"
)

// Every variant passes its own checks and moves exactly the fds asked for.
func TestRunVariants(t *testing.T) {
	for _, kind := range []Kind{KindFile, KindUnix} {
		for _, fds := range []int{1, 16, scmMaxFD} {
			for _, pairs := range []int{1, 3} {
				t.Run(fmt.Sprintf("kind=%s/fds=%d/pairs=%d", kind, fds, pairs), func(t *testing.T) {
					const ops = 130
					res, err := Run(Config{Kind: kind, FdsPerMsg: fds, Pairs: pairs, Ops: ops})
					if err != nil {
						t.Fatal(err)
					}
					if res.Ops != ops || res.FdsRecv != ops*int64(fds) || res.MsgsRecv != ops {
						t.Fatalf("counts %+v, want %d ops moving %d fds", res.Counts, ops, ops*fds)
					}
					if res.Connections < int64(pairs) && pairs*budgetChunk <= ops {
						t.Errorf("%d connections for %d pairs", res.Connections, pairs)
					}
				})
			}
		}
	}
}

func TestRunZeroOps(t *testing.T) {
	res, err := Run(Config{Kind: KindFile, FdsPerMsg: 1, Pairs: 2, Ops: 0})
	if err != nil || res.Ops != 0 {
		t.Fatalf("zero ops: %+v, %v", res.Counts, err)
	}
}

func TestRunBadConfig(t *testing.T) {
	for _, cfg := range []Config{
		{Kind: "pipe", FdsPerMsg: 1, Pairs: 1},
		{Kind: KindFile, FdsPerMsg: 0, Pairs: 1},
		{Kind: KindFile, FdsPerMsg: scmMaxFD + 1, Pairs: 1},
		{Kind: KindFile, FdsPerMsg: 1, Pairs: 0},
	} {
		if _, err := Run(cfg); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
}

// The client's fstat sample catches a server that sends the wrong file.
func TestRunWrongFileFires(t *testing.T) {
	res, err := Run(Config{Kind: KindFile, FdsPerMsg: 16, Pairs: 1, Ops: 50, path: "/dev/null"})
	if err == nil || !strings.Contains(err.Error(), "device 1:3, want /dev/zero") {
		t.Fatalf("server sending /dev/null: %v, want the fstat check to fire", err)
	}
	noDir(t, res.Dir)
}

// The server fails when the send with the "invalid" fd succeeds.
func TestRunBadFDFires(t *testing.T) {
	fd, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	res, err := Run(Config{Kind: KindFile, FdsPerMsg: 1, Pairs: 2, Ops: 50, badFD: fd})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("invalid fd %d returned success, want EBADF", fd)) {
		t.Fatalf("EBADF send with an open fd: %v, want the EBADF check to fire", err)
	}
	noDir(t, res.Dir)
}

// Runs leave no fd in the process and no socket path or directory behind.
func TestRunCleansUp(t *testing.T) {
	before, err := limits.OpenFds()
	if err != nil {
		t.Fatal(err)
	}
	parent := t.TempDir()
	procs := runtime.GOMAXPROCS(0)
	res, err := Run(Config{Kind: KindUnix, FdsPerMsg: 16, Pairs: 2, Ops: 300, tempDir: parent})
	if err != nil {
		t.Fatal(err)
	}
	if now := runtime.GOMAXPROCS(0); now != procs {
		t.Errorf("GOMAXPROCS is %d after the run, was %d", now, procs)
	}
	if filepath.Dir(res.Dir) != parent {
		t.Errorf("private directory %s is not under %s", res.Dir, parent)
	}
	noDir(t, res.Dir)
	if left, _ := os.ReadDir(parent); len(left) != 0 {
		t.Errorf("%s holds %d entries after the run", parent, len(left))
	}
	fdsBack(t, before)
}

// A socket path too long for sun_path stops the run with a message naming
// TMPDIR and leaves nothing behind.
func TestRunLongPath(t *testing.T) {
	parent := filepath.Join(t.TempDir(), strings.Repeat("d", 100))
	if err := os.Mkdir(parent, 0o700); err != nil {
		t.Fatal(err)
	}
	res, err := Run(Config{Kind: KindFile, FdsPerMsg: 1, Pairs: 1, Ops: 10, tempDir: parent})
	if err == nil || !strings.Contains(err.Error(), "TMPDIR") {
		t.Fatalf("socket path over 107 bytes: %v, want an error naming TMPDIR", err)
	}
	noDir(t, res.Dir)
}

// fdsBack fails t unless this process holds before fds again.
func fdsBack(t *testing.T, before int) {
	t.Helper()
	after, err := limits.OpenFds()
	if err != nil {
		t.Fatal(err)
	}
	if err := checkFdsBack("process", before, after); err != nil {
		t.Error(err)
	}
}

func noDir(t *testing.T, dir string) {
	t.Helper()
	if dir == "" {
		t.Fatal("run made no private directory")
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("private directory %s still exists after the run (%v)", dir, err)
	}
}

// The sides of a row run many rounds: each round moves exactly its ops'
// fds, in the same child processes, with the listeners and socket paths
// kept between rounds; a low RLIMIT_NOFILE makes clients reconnect often,
// so rounds end with a client between connections too. Close leaves no
// path, directory or fd.
func TestRounds(t *testing.T) {
	before, err := limits.OpenFds()
	if err != nil {
		t.Fatal(err)
	}
	lowerNofile(t, uint64(before+2+headroom+40))
	for _, kind := range []Kind{KindFile, KindUnix} {
		t.Run(fmt.Sprintf("kind=%s", kind), func(t *testing.T) {
			s, err := Start(Config{Kind: kind, FdsPerMsg: 16, Pairs: 2, tempDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			pids := s.run.Pids()
			var dir string
			for i, ops := range []int64{1, 0, 130, 7, 1000, 64, 3, 129, 0, 500} {
				res, err := s.Round(ops, nil)
				if err != nil {
					s.Close()
					t.Fatalf("round %d of %d ops: %v", i+1, ops, err)
				}
				if res.Ops != ops || res.MsgsRecv != ops || res.FdsRecv != 16*ops {
					t.Errorf("round %d: counts %+v, want %d ops moving %d fds", i+1, res.Counts, ops, 16*ops)
				}
				if left, err := os.ReadDir(res.Dir); err != nil || len(left) != 2 {
					t.Errorf("round %d: %s holds %d paths (%v) between rounds, want the 2 listeners'", i+1, res.Dir, len(left), err)
				}
				dir = res.Dir
			}
			if now := s.run.Pids(); fmt.Sprint(now) != fmt.Sprint(pids) {
				t.Errorf("sides ran as %v after 10 rounds, started as %v", now, pids)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			noDir(t, dir)
		})
	}
	fdsBack(t, before)
}

// A row's kept sides start once for its trials and again for another
// Config (a -cpu list's Pairs); the row's end leaves nothing behind.
func TestKeptStartsOnce(t *testing.T) {
	before, err := limits.OpenFds()
	if err != nil {
		t.Fatal(err)
	}
	var k peer.Kept[*Sides]
	var pids []string
	for i, pairs := range []int{1, 1, 1, 2, 2} {
		res, err := keptRound(&k, Config{Kind: KindFile, FdsPerMsg: 1, Pairs: pairs, Ops: int64(100 * (i + 1))}, nil)
		if err != nil {
			endRow(&k, before)
			t.Fatalf("trial %d: %v", i+1, err)
		}
		if res.Ops != int64(100*(i+1)) {
			t.Errorf("trial %d: %d ops, want %d", i+1, res.Ops, 100*(i+1))
		}
		kids, err := child.Children()
		if err != nil {
			t.Fatal(err)
		}
		pids = append(pids, fmt.Sprint(kids))
	}
	if pids[0] != pids[1] || pids[1] != pids[2] || pids[3] != pids[4] || pids[2] == pids[3] || strings.Count(pids[3], " ") != 3 {
		t.Errorf("sides per trial %v, want one start for the 3 trials of 1 pair and one for the 2 of 2 pairs", pids)
	}
	if err := endRow(&k, before); err != nil {
		t.Fatal(err)
	}
	if left, err := child.Children(); err != nil || len(left) != 0 {
		t.Errorf("after the row: children %v (%v), want none", left, err)
	}
}

// TestPlacedRounds: pinned pairs are seen where their placement put them
// (same-cpu/op 1 with cpu=same, 0 with cpu=cross), and a client that
// leaves its pin fails the round, naming it.
func TestPlacedRounds(t *testing.T) {
	limits.NeedCPUs(t, "pairs placed on one CPU and on two", 2)
	for _, c := range []struct {
		cpu   peer.Placement
		share float64
	}{{peer.Same, 1}, {peer.Cross, 0}} {
		s, err := Start(Config{Kind: KindFile, FdsPerMsg: 1, Pairs: 2, CPU: c.cpu, tempDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		for round := range 2 {
			res, err := s.Round(5000, nil)
			if err != nil {
				s.Close()
				t.Fatalf("cpu=%s round %d: %v", c.cpu, round, err)
			}
			if share, ok := res.Seen.Share(); !ok || share != c.share {
				t.Errorf("cpu=%s round %d: same-CPU share %v (%v; %+v), want %v", c.cpu, round, share, ok, res.Seen, c.share)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	plan, err := peer.Place(peer.Cross)
	if err != nil {
		t.Fatal(err)
	}
	pin, to := plan.Away(0, 1)
	_, err = Run(Config{Kind: KindFile, FdsPerMsg: 1, Pairs: 1, Ops: 1000, CPU: peer.Cross, moveTo: to + 1, tempDir: t.TempDir()})
	want := fmt.Sprintf("pair 0's client, pinned to CPU %d, was seen on CPU %d", pin, to)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("a client that left its pin: %v, want %q", err, want)
	}
}
