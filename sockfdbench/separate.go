//go:build linux

package sockfdbench

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/kbench/kbench/internal/child"
	"github.com/kbench/kbench/internal/skip"
	"golang.org/x/sys/unix"
)

// sideArgs is what a child side needs to rebuild its pair.
type sideArgs struct {
	Kind      Kind
	FdsPerMsg int
	Pairs     int
	Pair      int    // this pair's index in the shared state
	Path      string // the socket path
	File      string // Config.path, the test hook
	Plan      planArgs
}

type planArgs struct{ PerConn, BadFD int }

// The roles: fd 4 is the shared state; the server's fd 5 its listening
// socket.
var (
	_ = child.Register("sockfd-server", func(c *child.Ctx) error { return runSide(c, true) })
	_ = child.Register("sockfd-client", func(c *child.Ctx) error { return runSide(c, false) })
)

// shared is the state the sides of every pair share across processes, in
// a memfd mapping: the op budget, then per pair its done and failed flags.
type shared struct {
	mem []byte
}

func sharedSize(pairs int) int { return 8 + 8*pairs }

// mapShared maps fd's first sharedSize(pairs) bytes.
func mapShared(fd, pairs int) (*shared, error) {
	mem, err := unix.Mmap(fd, 0, sharedSize(pairs), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("sockfd: mmap of the shared state: %s", skip.Errno(err))
	}
	return &shared{mem}, nil
}

func newShared(pairs int) (int, *shared, error) {
	fd, err := unix.MemfdCreate("kbench-sockfd", unix.MFD_CLOEXEC)
	if err != nil {
		return -1, nil, fmt.Errorf("sockfd: memfd_create: %s", skip.Errno(err))
	}
	if err := unix.Ftruncate(fd, int64(sharedSize(pairs))); err != nil {
		unix.Close(fd)
		return -1, nil, fmt.Errorf("sockfd: ftruncate of the shared state: %s", skip.Errno(err))
	}
	sh, err := mapShared(fd, pairs)
	if err != nil {
		unix.Close(fd)
		return -1, nil, err
	}
	return fd, sh, nil
}

func (s *shared) budget() *atomic.Int64 { return (*atomic.Int64)(unsafe.Pointer(&s.mem[0])) }
func (s *shared) done(i int) *atomic.Bool {
	return (*atomic.Bool)(unsafe.Pointer(&s.mem[8+8*i]))
}
func (s *shared) failed(i int) *atomic.Bool {
	return (*atomic.Bool)(unsafe.Pointer(&s.mem[8+8*i+4]))
}
func (s *shared) unmap() { unix.Munmap(s.mem) }

// runSeparate runs every pair's server and client as child processes.
func runSeparate(cfg *Config, pairs []*pair, pl plan, start, stop func()) (Counts, error) {
	var total Counts
	memfd, sh, err := newShared(len(pairs))
	if err != nil {
		return total, err
	}
	defer unix.Close(memfd)
	defer sh.unmap()
	sh.budget().Store(cfg.Ops)

	var g child.Group
	defer g.Close()
	for i, p := range pairs {
		a := sideArgs{Kind: cfg.Kind, FdsPerMsg: cfg.FdsPerMsg, Pairs: len(pairs), Pair: i, Path: p.path, File: cfg.path,
			Plan: planArgs{pl.perConn, pl.badFD}}
		if _, err := g.Start(child.Spec{Role: "sockfd-server", Args: a, Fds: []int{memfd, p.lfd}}); err != nil {
			return total, err
		}
		if _, err := g.Start(child.Spec{Role: "sockfd-client", Args: a, Fds: []int{memfd}}); err != nil {
			return total, err
		}
	}
	if err := g.Ready(); err != nil {
		return total, err
	}
	if start != nil {
		start()
	}
	if err := g.Go(); err != nil {
		return total, err
	}
	counts := make([]Counts, len(g.Procs))
	err = g.Results(func(i int) any { return &counts[i] })
	if stop != nil {
		stop()
	}
	if err != nil {
		return total, err
	}
	if err := g.Wait(); err != nil {
		return total, err
	}
	for _, c := range counts {
		total.add(c)
	}
	return total, nil
}

// runSide is one side of one pair in a child process.
func runSide(c *child.Ctx, server bool) error {
	var a sideArgs
	if err := c.Args(&a); err != nil {
		return err
	}
	sh, err := mapShared(c.File(0), a.Pairs)
	if err != nil {
		return err
	}
	defer sh.unmap()
	cfg := &Config{Kind: a.Kind, FdsPerMsg: a.FdsPerMsg, Pairs: a.Pairs, path: a.File}
	p := &pair{
		cfg: cfg, plan: plan{perConn: a.Plan.PerConn, badFD: a.Plan.BadFD},
		lfd: -1, path: a.Path, budget: sh.budget(),
		done: sh.done(a.Pair), failed: sh.failed(a.Pair),
		begin: func() error { return c.Ready(nil) },
	}
	side, counts := p.receive, &p.client
	if server {
		p.lfd = c.File(1)
		side, counts = p.serve, &p.server
	}
	if err := side(); err != nil {
		return err
	}
	return c.Result(counts)
}
