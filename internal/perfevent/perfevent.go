//go:build linux

// Package perfevent opens perf_event_open(2) events and reads them: one
// event on one CPU or task (Event), or the same events on every online CPU
// (system-wide) or on every thread of a process and its children (Set),
// summed and scaled by time_enabled/time_running where the kernel
// multiplexed them.
//
// Errors that mean "this machine or kernel cannot count it here" (no PMU,
// an event the PMU lacks, no perf_event_open at all, or a refusal for
// lack of privilege) are a skip.Unsupported, as cilium/ebpf's probes wrap
// ebpf.ErrNotSupported; a refusal also wraps fs.ErrPermission (EACCES or
// EPERM). OpenError is the one place a failed open is explained: callers
// add what they were doing, never a second explanation.
package perfevent

import (
	"encoding/binary"
	"fmt"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/kbench/kbench/internal/cpus"
	"github.com/kbench/kbench/internal/skip"
)

// ErrNotSupported is skip.ErrNotSupported, wrapped by errors meaning the
// machine or kernel cannot count an event.
var ErrNotSupported = skip.ErrNotSupported

// Event is one open perf event file descriptor.
type Event struct {
	fd   int
	attr unix.PerfEventAttr
	name string
}

// Open calls perf_event_open(attr, pid, cpu, group, PERF_FLAG_FD_CLOEXEC):
// pid -1 and a CPU counts everything on that CPU (system-wide); a thread
// id and cpu -1 counts that thread wherever it runs (and, with the inherit
// bit, the threads and processes it creates after Open). group, when not
// nil, is the leader whose group the event joins. attr.Size is set when
// zero. The event is named name in errors.
func Open(name string, attr *unix.PerfEventAttr, pid, cpu int, group *Event) (*Event, error) {
	a := *attr
	if a.Size == 0 {
		a.Size = uint32(unix.PERF_ATTR_SIZE_VER5)
	}
	groupFd := -1
	if group != nil {
		groupFd = group.fd
	}
	fd, err := unix.PerfEventOpen(&a, pid, cpu, groupFd, unix.PERF_FLAG_FD_CLOEXEC)
	if err != nil {
		return nil, OpenError(name, &a, pid, cpu, err)
	}
	return &Event{fd: fd, attr: a, name: name}, nil
}

// FD is the event's file descriptor, for mmap or other ioctls.
func (e *Event) FD() int { return e.fd }

// Attr is the attribute the event was opened with.
func (e *Event) Attr() unix.PerfEventAttr { return e.attr }

// Enable, Disable and Reset apply to the event alone, or with group set
// to its whole group (the event must be the leader).
func (e *Event) Enable(group bool) error { return e.ioctl(unix.PERF_EVENT_IOC_ENABLE, group) }

// Disable stops counting.
func (e *Event) Disable(group bool) error { return e.ioctl(unix.PERF_EVENT_IOC_DISABLE, group) }

// Reset zeroes the count (not the enabled and running times).
func (e *Event) Reset(group bool) error { return e.ioctl(unix.PERF_EVENT_IOC_RESET, group) }

func (e *Event) ioctl(req uint, group bool) error {
	arg := 0
	if group {
		arg = unix.PERF_IOC_FLAG_GROUP
	}
	if err := unix.IoctlSetInt(e.fd, req, arg); err != nil {
		return fmt.Errorf("perf event %s: ioctl %#x: %w", e.name, req, err)
	}
	return nil
}

// Count is what one read of a counting event returns.
type Count struct {
	Value   uint64 // the raw count
	Enabled uint64 // ns the event was enabled (0 if not in the read format)
	Running uint64 // ns it was on the PMU (0 if not in the read format)
}

// Scaled estimates the count over the whole enabled time, value *
// enabled/running, as perf stat does for a multiplexed event; ok is false
// when the event was enabled but never ran, so nothing can be estimated.
// Without times in the read format, it is the raw value.
func (c Count) Scaled() (v float64, ok bool) {
	switch {
	case c.Enabled == 0 && c.Running == 0:
		return float64(c.Value), true
	case c.Running == 0:
		return 0, false
	case c.Running >= c.Enabled:
		return float64(c.Value), true
	}
	return float64(c.Value) * float64(c.Enabled) / float64(c.Running), true
}

// Read reads a counting event (read formats TOTAL_TIME_ENABLED and
// TOTAL_TIME_RUNNING are understood; GROUP and ID are not). For an event
// with inherit, the count includes its children, live and exited.
func (e *Event) Read() (Count, error) {
	rf := e.attr.Read_format
	if rf&^(unix.PERF_FORMAT_TOTAL_TIME_ENABLED|unix.PERF_FORMAT_TOTAL_TIME_RUNNING) != 0 {
		return Count{}, fmt.Errorf("perf event %s: read format %#x not understood", e.name, rf)
	}
	var buf [24]byte
	want := 8
	if rf&unix.PERF_FORMAT_TOTAL_TIME_ENABLED != 0 {
		want += 8
	}
	if rf&unix.PERF_FORMAT_TOTAL_TIME_RUNNING != 0 {
		want += 8
	}
	n, err := unix.Read(e.fd, buf[:want])
	if err != nil {
		return Count{}, fmt.Errorf("perf event %s: read: %w", e.name, err)
	}
	if n != want {
		return Count{}, fmt.Errorf("perf event %s: read %d bytes, want %d", e.name, n, want)
	}
	c := Count{Value: binary.NativeEndian.Uint64(buf[0:])}
	off := 8
	if rf&unix.PERF_FORMAT_TOTAL_TIME_ENABLED != 0 {
		c.Enabled = binary.NativeEndian.Uint64(buf[off:])
		off += 8
	}
	if rf&unix.PERF_FORMAT_TOTAL_TIME_RUNNING != 0 {
		c.Running = binary.NativeEndian.Uint64(buf[off:])
	}
	return c, nil
}

// Close closes the descriptor; closing twice is harmless.
func (e *Event) Close() error {
	if e == nil || e.fd < 0 {
		return nil
	}
	err := unix.Close(e.fd)
	e.fd = -1
	return err
}

// Scope is where a Set counts.
type Scope int

const (
	// SystemWide counts every task on every online CPU (perf stat -a):
	// the peer side of a socket, a server, kernel threads, and other
	// load on the machine.
	SystemWide Scope = iota + 1
	// Process counts the threads of a process and of its child
	// processes, those alive at open and those they create later.
	Process
)

func (s Scope) String() string {
	switch s {
	case SystemWide:
		return "system-wide"
	case Process:
		return "process"
	}
	return "scope(" + strconv.Itoa(int(s)) + ")"
}

// CanSystemWide reports whether this process may count whole CPUs, by
// trying: the rule (root, CAP_PERFMON or CAP_SYS_ADMIN, or
// kernel.perf_event_paranoid <= 0) has changed across kernels and LSMs
// may refuse it too. The error says why not.
func CanSystemWide() error {
	attr := unix.PerfEventAttr{
		Type:   unix.PERF_TYPE_SOFTWARE,
		Config: unix.PERF_COUNT_SW_DUMMY,
		Bits:   unix.PerfBitDisabled,
	}
	online, err := cpus.Online()
	if err != nil {
		return err
	}
	e, err := Open("dummy", &attr, -1, online[0], nil)
	if err != nil {
		return err
	}
	return e.Close()
}
