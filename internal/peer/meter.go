//go:build linux

package peer

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/kbench/kbench/internal/cpus"
)

// A Meter is a row's placement meter: for each pair of sides (a flow's
// client and server, a sockfd server and its client, ping and pong), the
// CPU each end was last seen on, so that a row reports the share of its
// round trips in which both ends were last seen on one CPU (same-cpu/op)
// and a pinned row proves that each end ran where it was pinned.
//
// Each end looks (Link.Look: getcpu(2), its own words' stores, one load
// of the other end's CPU) at its round's go and then at its chunk
// boundaries (a Taker's take, or the side's own yield check), at most
// once a millisecond (lookEvery); the parent sums the looks after the
// round, outside the timed region. A look publishes the end's CPU,
// counts the ops the end did since its previous look as ops with the
// other end on the same CPU or not (by the other end's last published
// CPU), and, for an end pinned to a CPU, counts a look that finds it
// elsewhere. The words live in a memfd mapping the sides share (Mem), one
// cache line per end.
//
// A look samples: an end that migrates and comes back between two looks
// is not seen, and the other end's CPU is as old as its last look. That
// is enough to tell the modes of an unpinned row apart (a pair that
// shares a CPU, one that keeps two) and to catch a pin that does not
// hold. A look costs about a quarter of a microsecond (a system call, and
// a cache line from the other end's CPU); at most one a millisecond per
// side keeps it under a few ten-thousandths of the row's time.
type Meter struct {
	mem   *Mem // the parent's own mapping of the region
	fd    int
	off   int
	pairs int
	names [3]string // a pair's noun and its two ends'
	last  []slotCounts
}

// MeterSize is the bytes a Meter of pairs pairs takes in a Mem.
func MeterSize(pairs int) int { return pairs * 2 * slotSize }

// slotSize is one end's words, a cache line of their own: the CPU last
// seen (+1; 0 before the first look), the CPU pinned to (+1; 0: not
// pinned), looks, the ops counted while the other end's CPU was known
// (paired), of them with it on this end's CPU (same), looks off the pin
// (off) and the last CPU found off it (+1).
const slotSize = 64

const (
	wCPU = 8 * iota
	wPin
	wLooks
	wPaired
	wSame
	wOff
	wOffCPU
)

// NewMeter is a meter for pairs pairs at off (a multiple of 64) in m,
// which the parent made (NewMem) and sides share; it maps its own view,
// which stays valid across m's Resize. pair names a pair ("flow") and
// end0 and end1 its ends ("client", "server"), for errors.
func NewMeter(m *Mem, off, pairs int, pair, end0, end1 string) (*Meter, error) {
	if off%slotSize != 0 || off+MeterSize(pairs) > m.Len() {
		return nil, fmt.Errorf("peer: a meter of %d pairs at offset %d of a %d-byte mapping", pairs, off, m.Len())
	}
	view, err := MapMem(m.Fd(), off+MeterSize(pairs))
	if err != nil {
		return nil, err
	}
	return &Meter{mem: view, fd: m.Fd(), off: off, pairs: pairs, names: [3]string{pair, end0, end1}, last: make([]slotCounts, 2*pairs)}, nil
}

// Pairs is the number of pairs the meter watches.
func (mt *Meter) Pairs() int { return mt.pairs }

// Close unmaps the meter's view (the Mem is its owner's to close).
func (mt *Meter) Close() error { return mt.mem.Close() }

// Watch is the meter's slot for end (0 or 1) of pair i, for Side.Watch.
func (mt *Meter) Watch(pair, end int) *Watch {
	if pair < 0 || pair >= mt.pairs || end < 0 || end > 1 {
		panic(fmt.Sprintf("peer: end %d of pair %d of a %d-pair meter", end, pair, mt.pairs))
	}
	return &Watch{m: mt, slot: 2*pair + end}
}

// Watch is one end's place in a Meter. A Side that carries one looks
// (Link.Look); a side pinned to a CPU has the pin checked at every look.
// A side in another peer.Group than its pair's other end (netbench's
// server flows) uses the same meter through its own Watch.
type Watch struct {
	m    *Meter
	slot int
}

// watchArgs is how a child process finds its Watch: the meter's memfd
// among its files, the meter's offset and size, and its slot.
type watchArgs struct{ File, Off, Size, Slot int }

// expect records the CPU the parent pinned the watched side to.
func (w *Watch) expect(pin bool, cpu int) {
	v := int64(0)
	if pin {
		v = int64(cpu) + 1
	}
	w.m.mem.Int64(w.m.off + w.slot*slotSize + wPin).Store(v)
}

// lookEvery is the least time between two looks of a side after the
// first of its round; tests set it to 0, so that every Look looks.
var lookEvery = time.Millisecond

// looker is a side's end of its Watch: its own words and the other end's
// CPU word, in the side's mapping, and its last look: when, at how many
// of the side's ops, and whether the round has one (based).
type looker struct {
	cpu, pin, looks, paired, same, off, offCPU *atomic.Int64
	other                                      *atomic.Int64
	last                                       time.Duration
	ops                                        int64
	based                                      bool
}

func newLooker(m *Mem, off, slot int) *looker {
	w := func(s, word int) *atomic.Int64 { return m.Int64(off + s*slotSize + word) }
	return &looker{
		cpu: w(slot, wCPU), pin: w(slot, wPin), looks: w(slot, wLooks), paired: w(slot, wPaired),
		same: w(slot, wSame), off: w(slot, wOff), offCPU: w(slot, wOffCPU), other: w(slot^1, wCPU),
	}
}

// goLook is the look at a round's go: it publishes the side's CPU and
// checks its pin; the round's first Look then takes its count of ops.
func (l *looker) goLook() {
	if l == nil {
		return
	}
	l.based = false
	l.read()
}

// look is Link.Look: the side has done ops ops (any origin; only
// differences count) by now (thread.Clock). The first look of a round
// takes the count, and later ones, at least lookEvery apart, count the
// ops since.
func (l *looker) look(ops int64, now time.Duration) {
	if l == nil {
		return
	}
	if l.based && now-l.last < lookEvery {
		return
	}
	l.last = now
	me, other, ok := l.read()
	if !ok {
		return
	}
	d := ops - l.ops
	l.ops = ops
	if !l.based || d <= 0 {
		l.based = true
		return
	}
	if other != 0 {
		l.paired.Store(l.paired.Load() + d)
		if other == me {
			l.same.Store(l.same.Load() + d)
		}
	}
}

// read reads the CPU the side runs on now (+1) and records it, checks
// it against the pin, and returns it with the other end's last (+1; 0:
// none yet). Only its end writes these words, so the counts are plain
// stores.
func (l *looker) read() (me, other int64, ok bool) {
	c, err := cpus.Current()
	if err != nil {
		return 0, 0, false
	}
	me = int64(c) + 1
	l.cpu.Store(me)
	l.looks.Store(l.looks.Load() + 1)
	if pin := l.pin.Load(); pin != 0 && pin != me {
		l.off.Store(l.off.Load() + 1)
		l.offCPU.Store(me)
	}
	return me, l.other.Load(), true
}

// slotCounts is a snapshot of one end's counts.
type slotCounts struct{ looks, paired, same, off int64 }

// Reading is what a meter saw since its previous Read.
type Reading struct {
	Paired int64 // ops counted at looks that found the other end's CPU
	Same   int64 // of them, with it on the looking end's CPU
	Looks  int64 // all looks
}

// Add adds o's looks to r: a row's rounds (internal/rounds) report the
// share over all of them.
func (r *Reading) Add(o Reading) {
	r.Paired += o.Paired
	r.Same += o.Same
	r.Looks += o.Looks
}

// Share is Same/Paired: the share of round trips in which both ends were
// last seen on one CPU; ok is false when no look found the other end.
func (r Reading) Share() (share float64, ok bool) {
	if r.Paired == 0 {
		return 0, false
	}
	return float64(r.Same) / float64(r.Paired), true
}

// Read sums the looks since the previous Read (the round just run) and
// fails, naming the end, its pin and the CPU it was found on, when an
// end pinned to a CPU was seen elsewhere.
func (mt *Meter) Read() (Reading, error) {
	var r Reading
	var errs []error
	for s := range 2 * mt.pairs {
		word := func(w int) int64 { return mt.mem.Int64(mt.off + s*slotSize + w).Load() }
		now := slotCounts{word(wLooks), word(wPaired), word(wSame), word(wOff)}
		was := mt.last[s]
		mt.last[s] = now
		r.Looks += now.looks - was.looks
		r.Paired += now.paired - was.paired
		r.Same += now.same - was.same
		if off := now.off - was.off; off > 0 {
			errs = append(errs, fmt.Errorf("%s %d's %s, pinned to CPU %d, was seen on CPU %d at %d of its %d looks: the pin did not hold",
				mt.names[0], s/2, mt.names[1+s%2], word(wPin)-1, word(wOffCPU)-1, off, now.looks-was.looks))
		}
	}
	return r, errors.Join(errs...)
}
