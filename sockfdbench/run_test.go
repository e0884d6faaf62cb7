//go:build linux

package sockfdbench

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/limits"
	"golang.org/x/sys/unix"
)

// Every variant passes its own checks and moves exactly the fds asked for.
func TestRunVariants(t *testing.T) {
	for _, kind := range []Kind{KindFile, KindUnix} {
		for _, fds := range []int{1, 16, scmMaxFD} {
			for _, pairs := range []int{1, 3} {
				t.Run(fmt.Sprintf("kind=%s/fds=%d/pairs=%d", kind, fds, pairs), func(t *testing.T) {
					const ops = 130
					res, err := Run(Config{Kind: kind, FdsPerMsg: fds, Pairs: pairs, Ops: ops}, nil, nil)
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
	res, err := Run(Config{Kind: KindFile, FdsPerMsg: 1, Pairs: 2, Ops: 0}, nil, nil)
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
		if _, err := Run(cfg, nil, nil); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
}

// The client's fstat sample catches a server that sends the wrong file.
func TestRunWrongFileFires(t *testing.T) {
	res, err := Run(Config{Kind: KindFile, FdsPerMsg: 16, Pairs: 1, Ops: 50, path: "/dev/null"}, nil, nil)
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
	res, err := Run(Config{Kind: KindFile, FdsPerMsg: 1, Pairs: 2, Ops: 50, badFD: fd}, nil, nil)
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
	res, err := Run(Config{Kind: KindUnix, FdsPerMsg: 16, Pairs: 2, Ops: 300, tempDir: parent}, nil, nil)
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
	after, err := limits.OpenFds()
	if err != nil {
		t.Fatal(err)
	}
	if err := checkFdsBack("process", before, after); err != nil {
		t.Error(err)
	}
}

// A socket path too long for sun_path stops the run with a message naming
// TMPDIR and leaves nothing behind.
func TestRunLongPath(t *testing.T) {
	parent := filepath.Join(t.TempDir(), strings.Repeat("d", 100))
	if err := os.Mkdir(parent, 0o700); err != nil {
		t.Fatal(err)
	}
	res, err := Run(Config{Kind: KindFile, FdsPerMsg: 1, Pairs: 1, Ops: 10, tempDir: parent}, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "TMPDIR") {
		t.Fatalf("socket path over 107 bytes: %v, want an error naming TMPDIR", err)
	}
	noDir(t, res.Dir)
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
