//go:build linux

package kprofile

import (
	"encoding/binary"
	"slices"
	"strings"
	"testing"
)

// sampleRecord encodes a PERF_RECORD_SAMPLE of sampleType.
func sampleRecord(misc uint16, pid, tid, cpu uint32, time, period uint64, chain ...uint64) []byte {
	le := binary.LittleEndian
	b := make([]byte, 8, 8+48+8*len(chain))
	le.PutUint32(b[0:], recordSample)
	le.PutUint16(b[4:], misc)
	b = le.AppendUint64(b, chain[0]) // ip: the chain's first address
	b = le.AppendUint32(b, pid)
	b = le.AppendUint32(b, tid)
	b = le.AppendUint64(b, time)
	b = le.AppendUint32(b, cpu)
	b = le.AppendUint32(b, 0)
	b = le.AppendUint64(b, period)
	b = le.AppendUint64(b, uint64(len(chain)))
	for _, a := range chain {
		b = le.AppendUint64(b, a)
	}
	le.PutUint16(b[6:], uint16(len(b)))
	return b
}

func lostRecord(n uint64) []byte {
	le := binary.LittleEndian
	b := make([]byte, 8, 24)
	le.PutUint32(b[0:], recordLost)
	le.PutUint16(b[6:], 24)
	b = le.AppendUint64(b, 7) // id
	return le.AppendUint64(b, n)
}

// put writes recs into ring from position pos (a free-running offset,
// as data_head is), wrapping at the end, and returns the new head.
func put(ring []byte, pos uint64, recs ...[]byte) uint64 {
	for _, r := range recs {
		for _, c := range r {
			ring[pos%uint64(len(ring))] = c
			pos++
		}
	}
	return pos
}

func TestRingWrapAndLost(t *testing.T) {
	ring := make([]byte, 256)
	const k, u = 0xffffffff81001010, 0x401234
	r1 := sampleRecord(miscKernel, 10, 11, 1, 1000, 250000, contextKernel, k, k+0x100, contextUser, u, u+8)
	r2 := sampleRecord(miscUser, 20, 21, 0, 2000, 250000, contextUser, u)
	// Start near the end so r1 wraps, and past one full lap, as a long
	// run's free-running tail is.
	tail := uint64(3*256 + 200)
	head := put(ring, tail, r1, lostRecord(5), r2)
	c := newCollector(nil)
	var rr ringReader
	next, err := rr.read(ring, tail, head, c.record)
	if err != nil {
		t.Fatal(err)
	}
	if next != head {
		t.Errorf("tail after read %d, want head %d", next, head)
	}
	if c.samples != 2 || c.lost != 5 || len(c.stacks()) != 2 {
		t.Fatalf("%s, %d bad; want 2 samples, 2 stacks, 5 lost", c.summary(), len(c.bad))
	}
	if c.first != 1000 || c.last != 2000 {
		t.Errorf("sample times %d..%d, want 1000..2000", c.first, c.last)
	}
	for _, a := range c.stacks() {
		switch a.pid {
		case 10:
			want := []frame{{k, true}, {k + 0x100, true}, {u, false}, {u + 8, false}}
			if !slices.Equal(a.frames, want) || a.tid != 11 || a.cpu != 1 || a.mode != miscKernel || a.period != 250000 {
				t.Errorf("kernel sample decoded as %+v", a)
			}
		case 20:
			if !slices.Equal(a.frames, []frame{{u, false}}) || a.mode != miscUser {
				t.Errorf("user sample decoded as %+v", a)
			}
		default:
			t.Errorf("unexpected sample %+v", a)
		}
	}
}

// A partial record at the head (the kernel never publishes one, but a
// torn read must not be consumed) is left for the next read.
func TestRingPartialRecordStaysUnread(t *testing.T) {
	ring := make([]byte, 128)
	r := sampleRecord(miscUser, 1, 1, 0, 1, 1, 0x401000)
	head := put(ring, 0, r)
	var rr ringReader
	c := newCollector(nil)
	next, err := rr.read(ring, 0, head-8, c.record)
	if err == nil || next != 0 || c.samples != 0 {
		t.Errorf("read of a cut record: tail %d, %d samples, err %v; want tail 0, none, an error", next, c.samples, err)
	}
}

func TestRingBadSize(t *testing.T) {
	ring := make([]byte, 64)
	var rr ringReader
	_, err := rr.read(ring, 0, 16, func(uint32, uint16, []byte) {})
	if err == nil || !strings.Contains(err.Error(), "size 0") {
		t.Errorf("zero-size record: err %v", err)
	}
	if _, err := rr.read(make([]byte, 100), 0, 8, nil); err == nil {
		t.Error("ring of 100 bytes accepted")
	}
	if _, err := rr.read(ring, 0, 65, nil); err == nil {
		t.Error("head more than a ring past tail accepted")
	}
}

func TestSampleTruncatedChain(t *testing.T) {
	r := sampleRecord(miscUser, 1, 1, 0, 1, 1, 0x401000, 0x401008)
	binary.LittleEndian.PutUint64(r[8+40:], 1000) // nr far past the record
	if _, err := parseSample(miscUser, r[8:]); err == nil {
		t.Error("sample with an oversized callchain count accepted")
	}
}

func TestFramesMarkers(t *testing.T) {
	const hv = contextHV
	got := frames([]uint64{0x10, contextKernel, 0x20, hv, 0x30, contextUser, 0x40}, miscKernel)
	want := []frame{{0x10, true}, {0x20, true}, {0x40, false}}
	if !slices.Equal(got, want) {
		t.Errorf("frames = %v, want %v (hypervisor frames dropped)", got, want)
	}
}

// A log past maxLog is folded into the aggregate without losing counts.
func TestCollectorFoldsLog(t *testing.T) {
	c := newCollector(nil)
	chain := []uint64{contextKernel}
	for i := range 100 {
		chain = append(chain, 0xffffffff81000000+uint64(i))
	}
	const n = 3 * maxLog / (8 * 100)
	for i := range n {
		c.add(sample{mode: miscKernel, pid: uint32(i % 3), period: 2, chain: chain})
	}
	if len(c.log)*logChunk > maxLog+logChunk {
		t.Errorf("log of %d chunks kept", len(c.log))
	}
	var count, period uint64
	for _, a := range c.stacks() {
		count += a.count
		period += a.period
	}
	if len(c.agg) != 3 || count != n || period != 2*n {
		t.Errorf("%d stacks, %d samples, period %d; want 3, %d, %d", len(c.agg), count, period, n, 2*n)
	}
}
