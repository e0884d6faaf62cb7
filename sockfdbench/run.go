//go:build linux

package sockfdbench

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kbench/kbench/internal/limits"
	"github.com/kbench/kbench/internal/peer"
	"github.com/kbench/kbench/internal/region"
	"github.com/kbench/kbench/internal/skip"
	"golang.org/x/sys/unix"
)

// Config is a row of the stress-ng sockfd sequence.
type Config struct {
	Kind      Kind
	FdsPerMsg int   // fds per SCM_RIGHTS message, 1 to scmMaxFD; stress-ng sends 1
	Pairs     int   // server/client pairs running at once (stress-ng instances)
	Ops       int64 // server ops over all pairs, for Run's one round
	// CPU places each pair's server (the pair's first end) and client;
	// "" is peer.Any.
	CPU peer.Placement

	// Test hooks; zero values mean the benchmark's behaviour.
	path    string // what the server opens for KindFile instead of /dev/zero
	badFD   int    // the fd the EBADF send carries instead of one above RLIMIT_NOFILE
	tempDir string // parent of the private socket directory instead of os.TempDir()
	moveTo  int    // CPU+1 each client moves its thread to once set up, leaving its pin
}

// Result is what a round did.
type Result struct {
	Counts
	PerConn int          // fds a client held before closing them and reconnecting
	Dir     string       // the private directory that held the socket paths; removed at Close
	Seen    peer.Reading // the placement meter's looks in the round
}

// sampleEvery is how often, in received messages, the client fstats a
// received fd (and the first message's every fd, each round) to prove it
// is what was sent.
const sampleEvery = 64

// budgetChunk is how many ops a server takes from the shared budget at a
// time (peer.Taker), so pairs do not bounce one counter's cache line per
// op.
const budgetChunk = 64

// sunPathMax is sizeof(sockaddr_un.sun_path) less the terminating NUL.
const sunPathMax = 107

// Sides are a row's started pairs: each pair's listening socket, bound
// in a private directory, its server and client child processes
// (internal/peer), and the state they share. They run rounds until Close.
//
// Each side is a child process (internal/child), as stress-ng's server
// and its forked client are; each runs solo (thread.Solo). The side's
// loop thread unshares its fd table (CLONE_FILES) from the Go runtime's
// other threads, so fd lookups take the single-owner path as in
// stress-ng's single-threaded processes.
type Sides struct {
	cfg   Config
	dir   string
	lfds  []int
	plan  plan
	mem   *peer.Mem
	sh    *shared
	meter *peer.Meter
	run   *peer.Group
	round int64
}

// Start checks that the process can run cfg.Pairs pairs (fds, tasks;
// RLIMIT_NOFILE for one message), makes the private socket directory and
// the listening sockets, plans the fds a client holds per connection and
// starts the sides. Nothing is counted against the limits after this:
// the rounds open only what the plan left room for.
func Start(cfg Config) (*Sides, error) {
	s := &Sides{}
	if err := s.start(cfg); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Sides) start(cfg Config) (err error) {
	if err := cfg.validate(); err != nil {
		return err
	}
	if cfg.CPU == "" {
		cfg.CPU = peer.Any
	}
	place, err := peer.Place(cfg.CPU)
	if err != nil {
		return err
	}
	if err := checkSides(cfg.Pairs); err != nil {
		return err
	}
	s.cfg = cfg
	s.dir, err = os.MkdirTemp(cfg.tempDir, "kbench-sockfd-")
	if err != nil {
		return fmt.Errorf("sockfd: private socket directory: %v", err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, s.cleanup(err))
		}
	}()
	pairs := make([]*pair, cfg.Pairs)
	for i := range pairs {
		path := filepath.Join(s.dir, fmt.Sprintf("sockfd-%d", i))
		if len(path) > sunPathMax {
			return fmt.Errorf("sockfd: socket path %q is %d bytes, more than sun_path's %d; set TMPDIR to a shorter directory", path, len(path), sunPathMax)
		}
		lfd, err := listen(path)
		if err != nil {
			return err
		}
		s.lfds = append(s.lfds, lfd)
		pairs[i] = &pair{lfd: lfd, path: path}
	}

	limit, _, err := limits.Nofile()
	if err != nil {
		return err
	}
	open, err := limits.OpenFds()
	if err != nil {
		return err
	}
	s.plan, err = makePlan(limit, open, cfg.FdsPerMsg, cfg.Pairs, unix.Geteuid() == 0)
	if err != nil {
		return err
	}
	if cfg.badFD != 0 {
		s.plan.badFD = cfg.badFD
	}
	if s.mem, err = peer.NewMem("kbench-sockfd", meterOff(cfg.Pairs)+peer.MeterSize(cfg.Pairs)); err != nil {
		return err
	}
	s.sh = newShared(s.mem)
	if s.meter, err = peer.NewMeter(s.mem, meterOff(cfg.Pairs), cfg.Pairs, "pair", "server", "client"); err != nil {
		return err
	}
	if s.run, err = peer.Start(sides(&cfg, pairs, s.plan, s.mem.Fd(), place, s.meter)); err != nil {
		return err
	}
	s.run.Defer(s.cleanup)
	return nil
}

// Round runs one round of ops server ops over the pairs and checks its
// counts and, for a pinned row, that every side ran where it was pinned
// (the placement meter). t, when not nil, is started once every side is
// ready and stopped once every side has sent its counts (a benchmark's
// region.ClockTimer). A failed round ends the sides; Close then returns
// its error.
func (s *Sides) Round(ops int64, t region.Timer) (Result, error) {
	res := Result{PerConn: s.plan.perConn, Dir: s.dir}
	if ops < 0 {
		return res, fmt.Errorf("sockfd: %d ops", ops)
	}
	s.round++
	s.sh.budget.Reset(ops)
	counts := make([]Counts, 2*s.cfg.Pairs)
	err := s.run.Round(func(int) any { return roundArgs{s.round} }, t, func(i int) any { return &counts[i] })
	if err != nil {
		return res, err
	}
	for _, c := range counts {
		res.add(c)
	}
	var merr error
	res.Seen, merr = s.meter.Read()
	return res, errors.Join(res.check(ops, s.cfg.FdsPerMsg), merr)
}

// Close ends the sides and reaps them; then (cleanup) it closes the
// listeners, checks that every server unlinked its socket path and
// removes the private directory.
func (s *Sides) Close() error { return s.run.Close() }

// cleanup is the row's end, after the sides (Run.Defer), or a failed
// Start's: after clean sides (sides nil) it fails when a socket path is
// left; it always closes what Start opened and removes the directory.
func (s *Sides) cleanup(sides error) error {
	for _, fd := range s.lfds {
		unix.Close(fd)
	}
	s.lfds = nil
	var err error
	if sides == nil {
		err = checkDirEmpty(s.dir)
	}
	err = errors.Join(err, removeDir(s.dir))
	if s.meter != nil {
		err = errors.Join(err, s.meter.Close())
	}
	if s.mem != nil {
		err = errors.Join(err, s.mem.Close())
	}
	return err
}

// Run starts cfg.Pairs pairs, runs one round of cfg.Ops ops and ends
// them, then checks that this process's fd table is back to its size
// before.
func Run(cfg Config) (res Result, err error) {
	before, err := limits.OpenFds()
	if err != nil {
		return res, err
	}
	s := &Sides{}
	err = s.start(cfg)
	res.Dir = s.dir
	if err != nil {
		return res, err
	}
	res, err = s.Round(cfg.Ops, nil)
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return res, err
	}
	after, err := limits.OpenFds()
	if err == nil {
		err = checkFdsBack("sockfd process", before, after)
	}
	return res, err
}

// keptRound runs a round of cfg.Ops ops on the row's sides, kept across
// the calls of the row's function (peer.Kept), starting them first if
// there are none (the first round, or after a failed one). A
// row keeps one Config: the key is all of it but Ops, so a -cpu list's
// GOMAXPROCS (Pairs) starts new sides. A failed round, a count check's
// included, ends them: the next call starts fresh ones.
func keptRound(k *peer.Kept[*Sides], cfg Config, t region.Timer) (Result, error) {
	ops := cfg.Ops
	cfg.Ops = 0
	_, err := k.Get(fmt.Sprintf("%+v", cfg), func() (*Sides, *peer.Group, error) {
		s, err := Start(cfg)
		if err != nil {
			return nil, nil, err
		}
		return s, s.run, nil
	})
	if err != nil {
		return Result{}, err
	}
	var res Result
	err = k.Round(func(s *Sides) (err error) {
		res, err = s.Round(ops, t)
		return err
	})
	return res, err
}

// endRow ends the row's kept sides (their cleanup and its checks) and
// checks that this process's fd table is back to before, its size at the
// row's start. A failed round's error was its call's.
func endRow(k *peer.Kept[*Sides], before int) error {
	if err := k.Close(); err != nil || k.Failed() {
		return err
	}
	after, err := limits.OpenFds()
	if err == nil {
		err = checkFdsBack("sockfd process", before, after)
	}
	return err
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
// directory after the servers, which unlink theirs at the row's end as
// stress-ng does at the end of its run, have ended.
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
