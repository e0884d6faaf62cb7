//go:build linux

package thread

import (
	"fmt"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Restartable sequences (rseq(2), Linux 4.18): glibc 2.35 and later
// registers an rseq area for every thread it starts, so the reference
// tools' processes (netperf, stress-ng, UnixBench, redis-server) have one,
// and the kernel updates it on every return to user space after a context
// switch or migration (rseq_handle_notify_resume). A Go test binary gets
// one only where it is built with cgo, whose threads glibc starts; a
// static build (CGO_ENABLED=0, the default where no C compiler is
// installed) has none, and its loops skip that kernel work (measured in
// results/2026-11-30-cgo-rseq.md). So Run registers an
// area for its thread where the C library has not: the kernel does the
// same work whichever way the binary was built.

// rseqSig is the signature abort handlers would carry (x86's RSEQ_SIG);
// kbench registers no critical sections.
const rseqSig = 0x53053053

// rseqFlagUnregister is RSEQ_FLAG_UNREGISTER.
const rseqFlagUnregister = 1

// rseqLen is the original struct rseq's size, which every kernel with
// rseq accepts; the struct is 32-byte aligned.
const rseqLen = 32

// rseqArea holds a struct rseq at a 32-byte aligned offset. The kernel
// writes it while its thread lives; Go's heap does not move objects, and
// Run keeps the area reachable until the thread has exited.
type rseqArea struct {
	buf [2 * rseqLen]byte
}

func (a *rseqArea) ptr() unsafe.Pointer {
	p := uintptr(unsafe.Pointer(&a.buf[0]))
	off := (rseqLen - p%rseqLen) % rseqLen
	return unsafe.Pointer(&a.buf[off])
}

func (a *rseqArea) call(flags uintptr) unix.Errno {
	_, _, e := unix.RawSyscall6(unix.SYS_RSEQ, uintptr(a.ptr()), rseqLen, flags, rseqSig, 0, 0)
	return e
}

// rseqState is what the probe found: whether Run registers areas, and
// the fingerprint's description.
type rseqState struct {
	register bool
	describe string
}

var (
	rseqOnce  sync.Once
	rseqFound rseqState
)

// probeRseq registers an area on a throw-away thread, once: a refusal
// (EINVAL for a second area) means the C library has registered one for
// its threads already.
func probeRseq() rseqState {
	rseqOnce.Do(func() { rseqFound = doProbeRseq() })
	return rseqFound
}

func doProbeRseq() rseqState {
	var st rseqState
	err := run(false, func() error {
		a := new(rseqArea)
		switch e := a.call(0); e {
		case 0:
			a.call(rseqFlagUnregister)
			st = rseqState{true, "registered by kbench on its benchmark threads (no C library registration: a static build)"}
		case unix.EINVAL, unix.EBUSY:
			// The thread has an area already, at another address
			// (EINVAL) or this one (EBUSY): glibc's.
			st = rseqState{false, "registered by the C library on every thread (cgo build)"}
		case unix.ENOSYS:
			st = rseqState{false, "none: rseq(2) is not in this kernel (before 4.18) or is refused (ENOSYS)"}
		default:
			st = rseqState{false, fmt.Sprintf("none: rseq(2): %v", e)}
		}
		return nil
	})
	if err != nil {
		st = rseqState{false, fmt.Sprintf("unknown: %v", err)}
	}
	return st
}

// Rseq describes, for the fingerprint, who registers the rseq area of
// the benchmarks' threads.
func Rseq() string { return probeRseq().describe }

// registerRseq gives the calling locked thread an rseq area where the
// probe found that the C library does not; it returns the area, which
// must stay reachable until the thread has exited, or nil.
func registerRseq() (*rseqArea, error) {
	if !probeRseq().register {
		return nil, nil
	}
	a := new(rseqArea)
	if e := a.call(0); e != 0 {
		return nil, fmt.Errorf("thread: rseq(2) registration on a new thread: %w (the probe's succeeded)", e)
	}
	return a, nil
}
