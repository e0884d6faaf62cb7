//go:build linux

package kprofile

import (
	"encoding/binary"
	"fmt"
)

// Record types and callchain context markers of the perf ABI
// (include/uapi/linux/perf_event.h), spelled out so the parser builds and
// is tested on any GOOS.
const (
	recordLost   = 2
	recordSample = 9

	contextHV     = ^uint64(0x20 - 1)  // (u64)-32
	contextKernel = ^uint64(0x80 - 1)  // (u64)-128
	contextUser   = ^uint64(0x200 - 1) // (u64)-512
	contextMax    = ^uint64(0xfff - 1) // (u64)-4095: values at or above are markers

	miscCPUModeMask = 0x7
	miscKernel      = 1
	miscUser        = 2

	// sampleType is what every sample carries, in the ABI's order:
	// IP | TID | TIME | CPU | PERIOD | CALLCHAIN.
	sampleIP        = 1 << 0
	sampleTID       = 1 << 1
	sampleTime      = 1 << 2
	sampleCallchain = 1 << 5
	sampleCPU       = 1 << 7
	samplePeriod    = 1 << 8
	sampleType      = sampleIP | sampleTID | sampleTime | sampleCPU | samplePeriod | sampleCallchain
)

// sample is one PERF_RECORD_SAMPLE of sampleType.
type sample struct {
	mode   uint16 // PERF_RECORD_MISC_CPUMODE bits of the header
	ip     uint64
	pid    uint32
	tid    uint32
	time   uint64 // CLOCK_MONOTONIC nanoseconds (use_clockid)
	cpu    uint32
	period uint64
	// chain is the callchain: context markers and addresses, the
	// sampled IP first. parseSample leaves it nil and sets raw, the
	// chain's bytes in the record, decoded only for a new stack.
	chain []uint64
	raw   []byte
}

// parseSample decodes the body of a sample record (after the 8-byte
// header). Its raw chain aliases body.
func parseSample(misc uint16, body []byte) (sample, error) {
	var s sample
	const fixed = 8 + 8 + 8 + 8 + 8 + 8 // ip, pid/tid, time, cpu/res, period, nr
	if len(body) < fixed {
		return s, fmt.Errorf("sample record of %d bytes, want at least %d", len(body), fixed)
	}
	le := binary.LittleEndian // perf records are in the host's order; kbench runs on little-endian hosts
	s.mode = misc & miscCPUModeMask
	s.ip = le.Uint64(body[0:])
	s.pid = le.Uint32(body[8:])
	s.tid = le.Uint32(body[12:])
	s.time = le.Uint64(body[16:])
	s.cpu = le.Uint32(body[24:])
	s.period = le.Uint64(body[32:])
	nr := le.Uint64(body[40:])
	rest := body[fixed:]
	if nr > uint64(len(rest)/8) {
		return s, fmt.Errorf("sample record claims %d callchain entries in %d bytes", nr, len(rest))
	}
	s.raw = rest[:8*nr]
	return s, nil
}

// decodeChain decodes a record's callchain bytes.
func decodeChain(raw []byte) []uint64 {
	chain := make([]uint64, len(raw)/8)
	for i := range chain {
		chain[i] = binary.LittleEndian.Uint64(raw[8*i:])
	}
	return chain
}

// parseLost decodes the body of a PERF_RECORD_LOST: {u64 id; u64 lost}.
func parseLost(body []byte) (uint64, error) {
	if len(body) < 16 {
		return 0, fmt.Errorf("lost record of %d bytes, want 16", len(body))
	}
	return binary.LittleEndian.Uint64(body[8:]), nil
}

// frame is one callchain address and the mode it ran in.
type frame struct {
	addr   uint64
	kernel bool
}

// frames splits a raw callchain at its context markers. Entries before
// any marker take the sample's own mode; hypervisor and guest contexts
// are dropped, as perf report does without guest symbols.
func frames(chain []uint64, mode uint16) []frame {
	out := make([]frame, 0, len(chain))
	kernel := mode == miscKernel
	keep := true
	for _, a := range chain {
		if a >= contextMax {
			switch a {
			case contextKernel:
				kernel, keep = true, true
			case contextUser:
				kernel, keep = false, true
			default: // hypervisor, guest
				keep = false
			}
			continue
		}
		if keep {
			out = append(out, frame{a, kernel})
		}
	}
	return out
}

// ringReader walks the records between tail and head of a perf ring
// buffer's data area (a power-of-two size), copying a record that wraps
// around the end into scratch so fn always sees it contiguous. It returns
// the new tail: every whole record consumed. A record with a size field
// too small to be valid stops the walk with an error, since nothing after
// it can be framed.
type ringReader struct {
	scratch []byte
}

func (r *ringReader) read(data []byte, tail, head uint64, fn func(typ uint32, misc uint16, body []byte)) (uint64, error) {
	size := uint64(len(data))
	if size == 0 || size&(size-1) != 0 {
		return tail, fmt.Errorf("ring data area of %d bytes is not a power of two", size)
	}
	if head-tail > size {
		return tail, fmt.Errorf("ring head %d is %d bytes past tail %d, more than the %d-byte buffer", head, head-tail, tail, size)
	}
	for head-tail >= 8 {
		hdr := r.bytes(data, tail, 8)
		typ := binary.LittleEndian.Uint32(hdr[0:])
		misc := binary.LittleEndian.Uint16(hdr[4:])
		n := uint64(binary.LittleEndian.Uint16(hdr[6:]))
		if n < 8 {
			return tail, fmt.Errorf("ring record at %d has size %d", tail, n)
		}
		if head-tail < n {
			return tail, fmt.Errorf("ring record at %d of %d bytes runs past head %d", tail, n, head)
		}
		rec := r.bytes(data, tail, n)
		fn(typ, misc, rec[8:])
		tail += n
	}
	return tail, nil
}

// bytes returns n bytes of the ring starting at off, contiguous.
func (r *ringReader) bytes(data []byte, off, n uint64) []byte {
	size := uint64(len(data))
	start := off & (size - 1)
	if start+n <= size {
		return data[start : start+n]
	}
	if uint64(cap(r.scratch)) < n {
		r.scratch = make([]byte, n)
	}
	buf := r.scratch[:n]
	k := copy(buf, data[start:])
	copy(buf[k:], data[:n-uint64(k)])
	return buf
}
