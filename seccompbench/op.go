//go:build linux

package seccompbench

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/kbench/kbench/internal/cpus"
	"github.com/kbench/kbench/internal/seccompfilter"
	"github.com/kbench/kbench/internal/thread"
)

// StressNGLoads is how many filters one stress-ng op installs: the eight
// huge filters of 32..4096 instructions and the small allow-list filter.
const StressNGLoads = 9

// hugeFailures is how many larger sizes the huge-filter search tries and
// the kernel refuses (each with seccomp(2) and prctl(2)).
const hugeFailures = 13

// expect is what the probe calls of an op answered on this kernel, read
// once per benchmark; every op must get the same answers.
type expect struct {
	notif, notifBad unix.Errno
	avail, availBad [len(seccompActions)]unix.Errno
	invalidOp       unix.Errno
}

func asErrno(err error) unix.Errno {
	var e unix.Errno
	if errors.As(err, &e) {
		return e
	}
	return 0
}

func probeCalls() (x expect) {
	x.notif = asErrno(getNotifSizes(0))
	x.notifBad = asErrno(getNotifSizes(0xffffffff))
	for k := range seccompActions {
		a := seccompActions[k]
		x.avail[k] = asErrno(getActionAvail(0, &a))
		x.availBad[k] = asErrno(getActionAvail(0xffffffff, &a))
	}
	x.invalidOp = asErrno(invalidOp())
	return x
}

// Loader performs stress-ng's seccomp op on throw-away threads.
type Loader struct {
	small [2]*seccompfilter.Program
	want  expect
	// Base is how many filters a fresh thread of this process starts with
	// (a container runtime's, say); FiltersKnown is false on kernels
	// before 5.9, whose status files have no Seccomp_filters line.
	Base         int
	FiltersKnown bool
}

// atFDCWD is AT_FDCWD as a variable, so it converts to uintptr.
var atFDCWD = unix.AT_FDCWD

var devNull = []byte("/dev/null\x00")
var testMsg = []byte("TEST\n")

// NewLoader assembles the filters and reads the kernel's answers to the
// probe calls, on a throw-away thread.
func NewLoader() (*Loader, error) {
	l := &Loader{}
	var err error
	if l.small, err = smallFilters(); err != nil {
		return nil, err
	}
	err = thread.Run(func() error {
		st, err := readThreadState()
		if err != nil {
			return err
		}
		l.Base, l.FiltersKnown = st.Filters, st.FiltersKnown
		l.want = probeCalls()
		return nil
	})
	return l, err
}

// Op runs stress-ng's op number i on a fresh thread, pinned to pin unless
// pin is negative, and returns how many filters it loaded. With check, the
// thread's status must show them all before it exits.
func (l *Loader) Op(i uint64, pin int, check bool) (loads int, err error) {
	err = thread.Run(func() error {
		if pin >= 0 {
			if err := cpus.Pin(pin); err != nil {
				return err
			}
		}
		loads, err = l.stressNG(i)
		if err == nil && check {
			err = l.checkLoaded(loads)
		}
		return err
	})
	return loads, err
}

// Single loads one small filter on a fresh thread: the per-load cost.
func (l *Loader) Single(i uint64, check bool) (loads int, err error) {
	err = thread.Run(func() error {
		if err := setNoNewPrivs(); err != nil {
			return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
		}
		if err := setFilter(l.small[i%2].Fprog()); err != nil {
			return fmt.Errorf("loading the %d-instruction filter: %w", l.small[i%2].Len(), err)
		}
		loads = 1
		if check {
			return l.checkLoaded(loads)
		}
		return nil
	})
	return loads, err
}

// stressNG is the body of stress-ng's child, on the calling thread.
func (l *Loader) stressNG(i uint64) (int, error) {
	// stress_seccomp_set_huge_filter
	if err := setNoNewPrivs(); err != nil {
		return 0, fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	loads, failed, max := 0, 0, 1
	for j, n := 0, 32; n < 65535 && n != max && j < 64; j++ {
		if n > len(hugeAllow) {
			return loads, fmt.Errorf("kernel accepted a %d-instruction filter, more than BPF_MAXINSNS (%d)", max, MaxHuge)
		}
		fp := unix.SockFprog{Len: uint16(n), Filter: &hugeAllow[0]}
		err := setFilter(&fp)
		if err != nil {
			if err2 := prctlSetFilter(&fp); err2 == nil {
				err = nil
			} else if err != unix.EINVAL || err2 != unix.EINVAL {
				return loads, fmt.Errorf("%d-instruction filter refused with %v (seccomp) and %v (prctl), want EINVAL", n, err, err2)
			}
		}
		if err == nil {
			loads++
			max, n = n, n+n
		} else {
			failed++
			n = max + (n-max)>>1
		}
	}
	if loads != StressNGLoads-1 || max != MaxHuge || failed != hugeFailures {
		return loads, fmt.Errorf("huge filters: %d loaded (largest %d), %d refused; want %d loaded up to %d, %d refused",
			loads, max, failed, StressNGLoads-1, MaxHuge, hugeFailures)
	}

	// stress_seccomp_set_filter, without the random filter and the
	// SECCOMP_SET_MODE_STRICT calls (see the package doc)
	if err := setNoNewPrivs(); err != nil {
		return loads, fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	if got := probeCalls(); got != l.want {
		return loads, fmt.Errorf("probe calls answered %+v, a fresh thread before the run got %+v", got, l.want)
	}
	small := l.small[i%2]
	if err := setFilter(small.Fprog()); err != nil {
		return loads, fmt.Errorf("loading the %d-instruction filter: %w", small.Len(), err)
	}
	loads++

	fd, _, e := unix.RawSyscall6(unix.SYS_OPENAT, uintptr(atFDCWD), uintptr(unsafe.Pointer(&devNull[0])), unix.O_WRONLY|unix.O_CLOEXEC, 0, 0, 0)
	if e != 0 {
		return loads, fmt.Errorf("open /dev/null: %w", e)
	}
	n, _, e := unix.RawSyscall(unix.SYS_WRITE, fd, uintptr(unsafe.Pointer(&testMsg[0])), uintptr(len(testMsg)))
	if _, _, e2 := unix.RawSyscall(unix.SYS_CLOSE, fd, 0, 0); e2 != 0 {
		return loads, fmt.Errorf("close /dev/null: %w", e2)
	}
	if e != 0 || int(n) != len(testMsg) {
		return loads, fmt.Errorf("write to /dev/null: %d bytes, %v", n, e)
	}
	return loads, nil
}
