//go:build linux

package sockfdbench

import (
	"fmt"
	"sync/atomic"

	"github.com/kbench/kbench/internal/cpus"
	"github.com/kbench/kbench/internal/peer"
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
	MoveTo    int    // Config.moveTo, the test hook
	Plan      planArgs
}

type planArgs struct{ PerConn, BadFD int }

// roundArgs is a round's number, 1 up: the pairs' done and ack words hold
// the last round each side finished, so no flag needs clearing between
// rounds.
type roundArgs struct{ Round int64 }

// The roles, each a child process (peer.Side): file 0 is the shared
// state; the server's file 1 its listening socket.
var (
	serverRole = peer.Register("sockfd-server", func(l peer.Link) error { return runSide(l, true) })
	clientRole = peer.Register("sockfd-client", func(l peer.Link) error { return runSide(l, false) })
)

// shared is the state a row's sides share, in a peer.Mem: the op budget,
// then per pair the round its server has finished (done), the round its
// client has finished (ack) and whether either side failed.
type shared struct {
	m      *peer.Mem
	budget *peer.Budget
}

// pairSlot is the bytes of one pair's words: done, ack, failed (padded).
const pairSlot = 24

func sharedSize(pairs int) int { return peer.BudgetSize + pairSlot*pairs }

// meterOff is where the pairs' placement meter (peer.Meter) starts in
// the shared mapping, after the words the sides map themselves, on a
// cache line of its own.
func meterOff(pairs int) int { return (sharedSize(pairs) + 63) &^ 63 }

func newShared(m *peer.Mem) *shared { return &shared{m: m, budget: peer.NewBudget(m, 0)} }

func (s *shared) done(i int) *atomic.Int64 { return s.m.Int64(peer.BudgetSize + pairSlot*i) }
func (s *shared) ack(i int) *atomic.Int64  { return s.m.Int64(peer.BudgetSize + pairSlot*i + 8) }
func (s *shared) failed(i int) *atomic.Bool {
	return s.m.Bool(peer.BudgetSize + pairSlot*i + 16)
}

// sides lists every pair's server and client, in that order, placed by
// place (the server is the pair's first end) and watched by meter.
func sides(cfg *Config, pairs []*pair, pl plan, memfd int, place peer.Pinning, meter *peer.Meter) []peer.Side {
	var s []peer.Side
	for i, p := range pairs {
		a := sideArgs{Kind: cfg.Kind, FdsPerMsg: cfg.FdsPerMsg, Pairs: len(pairs), Pair: i, Path: p.path, File: cfg.path,
			MoveTo: cfg.moveTo, Plan: planArgs{pl.perConn, pl.badFD}}
		server := peer.Side{Role: serverRole, Args: a, Fds: []int{memfd, p.lfd}, Watch: meter.Watch(i, 0)}
		client := peer.Side{Role: clientRole, Args: a, Fds: []int{memfd}, Watch: meter.Watch(i, 1)}
		place.Pin(&server, i, 0)
		place.Pin(&client, i, 1)
		s = append(s, server, client)
	}
	return s
}

// runSide is one side of one pair in a child process, for every round
// of the row. The server unlinks its socket path when the row ends, as
// stress-ng's does at the end of its run.
func runSide(l peer.Link, server bool) error {
	var a sideArgs
	if err := l.Args(&a); err != nil {
		return err
	}
	m, err := peer.MapMem(l.File(0), sharedSize(a.Pairs))
	if err != nil {
		return err
	}
	defer m.Close()
	sh := newShared(m)
	cfg := &Config{Kind: a.Kind, FdsPerMsg: a.FdsPerMsg, Pairs: a.Pairs, path: a.File}
	p := &pair{
		cfg: cfg, plan: plan{perConn: a.Plan.PerConn, badFD: a.Plan.BadFD},
		lfd: -1, path: a.Path, budget: sh.budget,
		done: sh.done(a.Pair), ack: sh.ack(a.Pair), failed: sh.failed(a.Pair),
		ready: func() error { return l.Ready(nil) }, link: l,
	}
	side := p.receive
	if server {
		p.lfd = l.File(1)
		side = p.serve
	}
	if err := p.setUp(server); err != nil {
		return err
	}
	if a.MoveTo > 0 && !server {
		if err := cpus.Pin(a.MoveTo - 1); err != nil {
			return err
		}
	}
	for {
		var r roundArgs
		ok, err := l.Next(&r)
		if err != nil {
			return err
		}
		if !ok {
			if server {
				unix.Unlink(p.path)
			}
			return nil
		}
		if r.Round <= p.round {
			return fmt.Errorf("sockfd: round %d after round %d", r.Round, p.round)
		}
		p.round = r.Round
		c, err := side()
		if err != nil {
			return err
		}
		if err := l.Result(c); err != nil {
			return err
		}
		if server {
			if err := p.settle(); err != nil {
				return err
			}
		}
	}
}
