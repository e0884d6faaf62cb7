//go:build linux

package sockfdbench

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kbench/kbench/internal/limits"
	"github.com/kbench/kbench/internal/skip"
	"golang.org/x/sys/unix"
)

// Config is one run of the stress-ng sockfd sequence.
type Config struct {
	Kind      Kind
	FdsPerMsg int   // fds per SCM_RIGHTS message, 1 to scmMaxFD; stress-ng sends 1
	Pairs     int   // server/client pairs running at once (stress-ng instances)
	Ops       int64 // server ops over all pairs

	// Test hooks; zero values mean the benchmark's behaviour.
	path    string // what the server opens for KindFile instead of /dev/zero
	badFD   int    // the fd the EBADF send carries instead of one above RLIMIT_NOFILE
	tempDir string // parent of the private socket directory instead of os.TempDir()
}

// Result is what a run did.
type Result struct {
	Counts
	PerConn int    // fds a client held before closing them and reconnecting
	Dir     string // the private directory that held the socket paths; removed
}

// sampleEvery is how often, in received messages, the client fstats a
// received fd (and the first message's every fd) to prove it is what was
// sent.
const sampleEvery = 64

// budgetChunk is how many ops a server takes from the shared budget at a
// time, so pairs do not bounce one counter's cache line per op.
const budgetChunk = 64

// sunPathMax is sizeof(sockaddr_un.sun_path) less the terminating NUL.
const sunPathMax = 107

// Run runs cfg.Pairs server/client pairs until the servers have done
// cfg.Ops ops between them, then checks the counts, the fd tables and the
// socket paths. start and stop, when not nil, are called from the calling
// goroutine once every side is ready and once every side has finished its
// loop, to bracket a benchmark's timed section.
//
// Each side is a child process (internal/child), as stress-ng's server
// and its forked client are; each runs solo (thread.Solo). The side's
// loop thread unshares its fd table (CLONE_FILES) from the Go runtime's
// other threads, so fd lookups take the single-owner path as in
// stress-ng's single-threaded processes.
func Run(cfg Config, start, stop func()) (res Result, err error) {
	if err := cfg.validate(); err != nil {
		return res, err
	}
	if err := checkSides(cfg.Pairs); err != nil {
		return res, err
	}
	procBefore, err := limits.OpenFds()
	if err != nil {
		return res, err
	}
	defer func() {
		// Runs last, after the listeners are closed.
		if err != nil {
			return
		}
		procAfter, cerr := limits.OpenFds()
		if cerr == nil {
			cerr = checkFdsBack("sockfd process", procBefore, procAfter)
		}
		err = cerr
	}()
	dir, err := os.MkdirTemp(cfg.tempDir, "kbench-sockfd-")
	if err != nil {
		return res, fmt.Errorf("sockfd: private socket directory: %v", err)
	}
	res.Dir = dir
	defer func() {
		err = errors.Join(err, removeDir(dir))
	}()

	pairs := make([]*pair, cfg.Pairs)
	var lfds []int
	defer func() {
		for _, fd := range lfds {
			unix.Close(fd)
		}
	}()
	for i := range pairs {
		path := filepath.Join(dir, fmt.Sprintf("sockfd-%d", i))
		if len(path) > sunPathMax {
			return res, fmt.Errorf("sockfd: socket path %q is %d bytes, more than sun_path's %d; set TMPDIR to a shorter directory", path, len(path), sunPathMax)
		}
		lfd, err := listen(path)
		if err != nil {
			return res, err
		}
		lfds = append(lfds, lfd)
		pairs[i] = &pair{cfg: &cfg, lfd: lfd, path: path}
	}

	limit, _, err := limits.Nofile()
	if err != nil {
		return res, err
	}
	open, err := limits.OpenFds()
	if err != nil {
		return res, err
	}
	pl, err := makePlan(limit, open, cfg.FdsPerMsg, cfg.Pairs, unix.Geteuid() == 0)
	if err != nil {
		return res, err
	}
	if cfg.badFD != 0 {
		pl.badFD = cfg.badFD
	}
	res.PerConn = pl.perConn

	counts, err := runSeparate(&cfg, pairs, pl, start, stop)
	if err != nil {
		return res, err
	}
	res.Counts = counts
	if err := checkDirEmpty(dir); err != nil {
		return res, err
	}
	return res, res.check(cfg.Ops, cfg.FdsPerMsg)
}

func (cfg *Config) validate() error {
	switch {
	case cfg.Kind != KindFile && cfg.Kind != KindUnix:
		return fmt.Errorf("sockfd: kind %q, want %q or %q", cfg.Kind, KindFile, KindUnix)
	case cfg.FdsPerMsg < 1 || cfg.FdsPerMsg > scmMaxFD:
		return fmt.Errorf("sockfd: %d fds per message, want 1 to %d (SCM_MAX_FD)", cfg.FdsPerMsg, scmMaxFD)
	case cfg.Pairs < 1:
		return fmt.Errorf("sockfd: %d pairs, want at least 1", cfg.Pairs)
	case cfg.Ops < 0:
		return fmt.Errorf("sockfd: %d ops", cfg.Ops)
	}
	return nil
}

// listen makes the server's listening socket as stress-ng does: AF_UNIX
// SOCK_STREAM, SO_REUSEADDR, bound to path, backlog 10.
func listen(path string) (int, error) {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("sockfd: socket(AF_UNIX, SOCK_STREAM): %s", skip.Errno(err))
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("sockfd: setsockopt(SO_REUSEADDR): %s", skip.Errno(err))
	}
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("sockfd: bind(%s): %s", path, skip.Errno(err))
	}
	if err := unix.Listen(fd, 10); err != nil {
		unix.Close(fd)
		unix.Unlink(path)
		return -1, fmt.Errorf("sockfd: listen(%s, 10): %s", path, skip.Errno(err))
	}
	return fd, nil
}

// checkDirEmpty fails when a socket path is left in the private
// directory after the servers, which unlink theirs as stress-ng does, have
// finished.
func checkDirEmpty(dir string) error {
	left, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("sockfd: read %s: %v", dir, err)
	}
	var errs []error
	for _, e := range left {
		errs = append(errs, fmt.Errorf("sockfd: socket file %s left behind by its server", filepath.Join(dir, e.Name())))
	}
	return errors.Join(errs...)
}

// removeDir removes the private directory and whatever is left in it,
// also after a failed run.
func removeDir(dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("sockfd: remove %s: %v", dir, err)
	}
	return nil
}
