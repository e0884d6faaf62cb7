//go:build linux

package peer

import (
	"fmt"
	"strings"

	"github.com/kbench/kbench/internal/cpus"
	"github.com/kbench/kbench/internal/fingerprint"
	"github.com/kbench/kbench/internal/limits"
)

// Placement is where a row's pairs of sides run, its cpu= key:
//   - any: nowhere in particular, as the reference reports ran (the
//     scheduler's wakeup placement is kernel behaviour a regression can
//     change);
//   - same: both ends of a pair pinned to one CPU (netperf -T0,0);
//   - cross: each end on a CPU of its own (netperf -T0,1), the pair the
//     ring of internal/cpus gives: other cores, on one LLC where it can.
//
// Pair i of a row (flow i, a sockfd instance) is placed over the usable
// CPUs in ring order: same puts both ends on ring[i], cross its first
// end on ring[i] and its second on ring[i+1], wrapping, so that with n
// CPUs each CPU holds as many first ends as second ones.
type Placement string

const (
	Any   Placement = "any"
	Same  Placement = "same"
	Cross Placement = "cross"
)

// Placements are every row's cpu= values, in row order.
var Placements = []Placement{Any, Same, Cross}

// Pinning is a placement made over this process's usable CPUs: the CPU,
// if any, that each end of each pair is pinned to (End).
type Pinning struct {
	Placement Placement
	ring      []int
}

// Place plans p over the usable CPUs (online and in the affinity mask).
// cross needs two: with one a limits.Shortfall names the affinity mask,
// which skips the row.
func Place(p Placement) (Pinning, error) {
	switch p {
	case Any:
		return Pinning{Placement: Any}, nil
	case Same, Cross:
	default:
		return Pinning{}, fmt.Errorf("peer: placement %q, want any, same or cross", p)
	}
	need := map[Placement]int{Same: 1, Cross: 2}[p]
	ring, _, err := ring(fmt.Sprintf("cpu=%s (the two ends of a pair on CPUs of their own)", p), need)
	if err != nil {
		return Pinning{}, err
	}
	return Pinning{Placement: p, ring: ring}, nil
}

// ring is the usable CPUs in cpus.Ring order and their topology, or a
// Shortfall when fewer than need are usable.
func ring(what string, need int) ([]int, cpus.Topology, error) {
	usable, err := limits.CPUs(what, need)
	if err != nil {
		return nil, cpus.Topology{}, err
	}
	topo, err := cpus.ReadTopology("/", usable)
	if err != nil {
		return nil, topo, fmt.Errorf("peer: CPU topology: %v", err)
	}
	return cpus.Ring(usable, topo), topo, nil
}

// End is where end (0 or 1) of pair i runs: pinned to cpu, or not pinned
// (any).
func (pl Pinning) End(pair, end int) (pin bool, cpu int) {
	switch pl.Placement {
	case Same:
		return true, pl.ring[pair%len(pl.ring)]
	case Cross:
		return true, pl.ring[(pair+end)%len(pl.ring)]
	}
	return false, 0
}

// Away is where end of pair i is pinned and another of the plan's CPUs,
// for tests that move a side off its pin to show the pin check firing.
// It needs a pinned plan of two CPUs or more.
func (pl Pinning) Away(pair, end int) (pin, away int) {
	_, pin = pl.End(pair, end)
	away = pl.ring[0]
	if away == pin {
		away = pl.ring[1]
	}
	return pin, away
}

// Pin places side s as end of pair i.
func (pl Pinning) Pin(s *Side, pair, end int) { s.Pin, s.CPU = pl.End(pair, end) }

// Fingerprint is the cpu.cross line of a test binary with two-sided
// rows: the CPUs pair 0 of a cpu=cross row runs on and what they share
// (SMT siblings, a core, an LLC), and the ring the other pairs follow,
// so that two machines whose cross rows meet on other kinds of CPU pairs
// do not compare unnoticed.
func Fingerprint() fingerprint.Field {
	r, topo, err := ring("cpu=cross", 2)
	if err != nil {
		return fingerprint.Field{Key: "cpu.cross", Value: "(none: " + err.Error() + ")"}
	}
	s := make([]string, len(r))
	for i, c := range r {
		s[i] = fmt.Sprint(c)
	}
	return fingerprint.Field{Key: "cpu.cross", Value: fmt.Sprintf("%d,%d (%s); pair i on ring positions i and i+1 of %s",
		r[0], r[1], topo.Relation(r[0], r[1]), strings.Join(s, ","))}
}
