//go:build linux

package kprofile

import (
	"encoding/binary"
	"fmt"
)

// collector keeps samples while a region runs and aggregates them by
// thread, CPU, mode and call chain when the profile is built. While the
// region runs, a sample costs a copy of its bytes into a log (and a look
// at its pid and tid): the drainer runs beside the benchmark, so it does
// no hashing or decoding there.
type collector struct {
	log     [][]byte // entries: u32 length, key (see add), u64 period
	samples uint64   // samples added
	lost    uint64   // samples the kernel dropped (PERF_RECORD_LOST)
	bad     []string
	// first and last sample times, CLOCK_MONOTONIC ns; 0 when none.
	first, last uint64
	// seen is called once per new pid and tid, while they live, so
	// their maps and names can be read before they exit.
	seen     func(pid, tid uint32)
	seenPids map[uint32]bool
	seenTids map[uint32]bool

	agg    map[string]*counts // the log aggregated by key, by stacks
	logged int                // log entries in agg
}

// maxLog bounds the log: past it (about 10 s of a busy 2-CPU machine at
// 4 kHz), the drainer folds it into agg, once.
const maxLog = 32 << 20

type counts struct{ count, period uint64 }

// aggSample is one distinct stack of one thread on one CPU in one mode.
type aggSample struct {
	pid, tid, cpu uint32
	mode          uint16
	frames        []frame
	key           string
	counts
}

const (
	keyHeader = 4 + 4 + 4 + 2
	logChunk  = 1 << 20
)

// stacks aggregates the log and decodes the distinct stacks.
func (c *collector) stacks() []*aggSample {
	c.aggregate()
	le := binary.LittleEndian
	out := make([]*aggSample, 0, len(c.agg))
	for k, n := range c.agg {
		a := &aggSample{
			pid: le.Uint32([]byte(k[0:])), tid: le.Uint32([]byte(k[4:])),
			cpu: le.Uint32([]byte(k[8:])), mode: le.Uint16([]byte(k[12:])),
			counts: *n, key: k,
		}
		a.frames = frames(decodeChain([]byte(k[keyHeader:])), a.mode)
		out = append(out, a)
	}
	return out
}

// aggregate counts the log's new entries by key.
func (c *collector) aggregate() {
	le := binary.LittleEndian
	n := 0
	for _, chunk := range c.log {
		for len(chunk) > 0 {
			size := le.Uint32(chunk)
			e := chunk[4 : 4+size]
			chunk = chunk[4+size:]
			if n++; n <= c.logged {
				continue
			}
			key := e[:len(e)-8]
			a := c.agg[string(key)]
			if a == nil {
				a = &counts{}
				c.agg[string(key)] = a
			}
			a.count++
			a.period += le.Uint64(e[len(e)-8:])
		}
	}
	c.logged = n
}

func newCollector(seen func(pid, tid uint32)) *collector {
	return &collector{
		agg:      map[string]*counts{},
		seen:     seen,
		seenPids: map[uint32]bool{},
		seenTids: map[uint32]bool{},
	}
}

// record takes one ring record.
func (c *collector) record(typ uint32, misc uint16, body []byte) {
	switch typ {
	case recordSample:
		s, err := parseSample(misc, body)
		if err != nil {
			c.note(err.Error())
			return
		}
		c.add(s)
	case recordLost:
		n, err := parseLost(body)
		if err != nil {
			c.note(err.Error())
			return
		}
		c.lost += n
	}
}

func (c *collector) note(msg string) {
	if len(c.bad) < 10 {
		c.bad = append(c.bad, msg)
	}
}

func (c *collector) add(s sample) {
	c.samples++
	if c.first == 0 || s.time < c.first {
		c.first = s.time
	}
	if s.time > c.last {
		c.last = s.time
	}
	if c.seen != nil && (!c.seenPids[s.pid] || !c.seenTids[s.tid]) {
		c.seenPids[s.pid] = true
		c.seenTids[s.tid] = true
		c.seen(s.pid, s.tid)
	}
	// The key is the sample's header fields and the chain's bytes as
	// the record holds them.
	n := keyHeader + 8 + 8
	switch {
	case len(s.raw) > 0:
		n += len(s.raw) - 8
	case len(s.chain) > 0:
		n += 8*len(s.chain) - 8
	}
	k := c.entry(4 + n)
	le := binary.LittleEndian
	k = le.AppendUint32(k, uint32(n))
	k = le.AppendUint32(k, s.pid)
	k = le.AppendUint32(k, s.tid)
	k = le.AppendUint32(k, s.cpu)
	k = le.AppendUint16(k, s.mode)
	switch {
	case len(s.raw) > 0:
		k = append(k, s.raw...)
	case len(s.chain) > 0:
		for _, a := range s.chain {
			k = le.AppendUint64(k, a)
		}
	default:
		k = le.AppendUint64(k, s.ip)
	}
	k = le.AppendUint64(k, s.period)
	c.log[len(c.log)-1] = k
}

// entry returns the log's last chunk with room for n more bytes.
func (c *collector) entry(n int) []byte {
	if len(c.log)*logChunk >= maxLog {
		c.aggregate()
		c.log, c.logged = nil, 0
	}
	if len(c.log) > 0 {
		if last := c.log[len(c.log)-1]; cap(last)-len(last) >= n {
			return last
		}
	}
	c.log = append(c.log, make([]byte, 0, max(logChunk, n)))
	return c.log[len(c.log)-1]
}

// summary is a line for messages and the profile's comments.
func (c *collector) summary() string {
	c.aggregate()
	return fmt.Sprintf("%d samples, %d stacks, %d lost", c.samples, len(c.agg), c.lost)
}
