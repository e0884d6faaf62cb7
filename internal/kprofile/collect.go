package kprofile

import (
	"encoding/binary"
	"fmt"
)

// collector aggregates decoded samples by thread, CPU, mode and call
// chain, so a long row costs memory per distinct stack, not per sample.
type collector struct {
	agg     map[string]*aggSample
	samples uint64 // samples added
	lost    uint64 // samples the kernel dropped (PERF_RECORD_LOST)
	bad     []string
	// first and last sample times, CLOCK_MONOTONIC ns; 0 when none.
	first, last uint64
	// seen is called once per new pid and tid, while they live, so
	// their maps and names can be read before they exit.
	seen     func(pid, tid uint32)
	seenPids map[uint32]bool
	seenTids map[uint32]bool
	key      []byte
}

type aggSample struct {
	pid, tid, cpu uint32
	mode          uint16
	frames        []frame
	count, period uint64
}

func newCollector(seen func(pid, tid uint32)) *collector {
	return &collector{
		agg:      map[string]*aggSample{},
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
	chain := s.chain
	if len(chain) == 0 {
		chain = []uint64{s.ip}
	}
	k := c.key[:0]
	k = binary.LittleEndian.AppendUint32(k, s.pid)
	k = binary.LittleEndian.AppendUint32(k, s.tid)
	k = binary.LittleEndian.AppendUint32(k, s.cpu)
	k = binary.LittleEndian.AppendUint16(k, s.mode)
	for _, a := range chain {
		k = binary.LittleEndian.AppendUint64(k, a)
	}
	c.key = k
	a := c.agg[string(k)]
	if a == nil {
		a = &aggSample{pid: s.pid, tid: s.tid, cpu: s.cpu, mode: s.mode, frames: frames(chain, s.mode)}
		c.agg[string(k)] = a
	}
	a.count++
	a.period += s.period
}

// summary is a line for messages and the profile's comments.
func (c *collector) summary() string {
	return fmt.Sprintf("%d samples, %d stacks, %d lost", c.samples, len(c.agg), c.lost)
}
