//go:build linux

package counters

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/kbench/kbench/internal/perfevent"
	"github.com/kbench/kbench/internal/procfs"
)

// A tally is a counter read as running totals at the region's edges,
// with nothing in between: the region's count is the sum over its timed
// phases of what the totals grew by. Per-task perf events would count
// the same things but are switched out and in with their task at every
// context switch, and a system-wide context-switch event runs on every
// switch: per-task task-clock events cost 11% of netbench TCPRR/flows=1
// and the system-wide software events about 1.7% (results/2026-11-30-counters-cost.md),
// while the kernel keeps these totals anyway.
type tally struct {
	name   string // the counter's name, as KBENCH_COUNTERS spells it
	unit   string
	read   func(starting bool) (totals, error)
	before totals
	sum    uint64
}

// totals are running totals by source: "self" (this process), "reaped"
// (children waited for, from getrusage RUSAGE_CHILDREN) and, for each
// live child process, its pid. A child that appears between two reads
// started at 0. One that went away between them was reaped, so "reaped"
// grew by its whole life: what it had at the first read is taken off.
type totals map[string]uint64

func (t *tally) start() error {
	var err error
	t.before, err = t.read(true)
	return err
}

func (t *tally) stop() error {
	after, err := t.read(false)
	if err != nil {
		return err
	}
	var sum, gone uint64
	for k, v := range after {
		if b := t.before[k]; v >= b {
			sum += v - b
		}
	}
	for k, b := range t.before {
		if _, ok := after[k]; !ok {
			gone += b
		}
	}
	t.sum += sum - min(gone, sum)
	return nil
}

// newTally returns the tally for counter name in scope, or nil where
// perf counts it instead (cpu-migrations, hardware).
func newTally(name string, scope perfevent.Scope) *tally {
	t := &tally{name: name}
	c, _ := lookup(name)
	t.unit = c.unit
	switch {
	case name == "task-clock":
		t.read = readCPU
	case name == "context-switches" && scope == perfevent.SystemWide:
		t.read = systemTotal("stat", "ctxt")
	case name == "page-faults" && scope == perfevent.SystemWide:
		t.read = systemTotal("vmstat", "pgfault")
	case name == "context-switches":
		t.read = processTotal(func(ru *unix.Rusage) uint64 { return uint64(ru.Nvcsw + ru.Nivcsw) }, processSwitches)
	case name == "page-faults":
		t.read = processTotal(func(ru *unix.Rusage) uint64 { return uint64(ru.Minflt + ru.Majflt) }, processFaults)
	default:
		return nil
	}
	return t
}

// systemTotal reads the "key N" line of a /proc file: /proc/stat's ctxt
// (context switches on every CPU since boot) or /proc/vmstat's pgfault.
func systemTotal(file, key string) func(bool) (totals, error) {
	return func(bool) (totals, error) {
		v, err := procfs.Host.Total(file, key)
		if err != nil {
			return nil, err
		}
		return totals{"system": v}, nil
	}
}

// processTotal reads a count of this process (getrusage RUSAGE_SELF:
// every thread, live or exited), of its children reaped meanwhile
// (RUSAGE_CHILDREN) and of each live child process.
func processTotal(fromRusage func(*unix.Rusage) uint64, perChild func(pid int) (uint64, error)) func(bool) (totals, error) {
	return func(bool) (totals, error) {
		t := totals{}
		for who, key := range map[int]string{unix.RUSAGE_SELF: "self", unix.RUSAGE_CHILDREN: "reaped"} {
			var ru unix.Rusage
			if err := unix.Getrusage(who, &ru); err != nil {
				return nil, fmt.Errorf("getrusage: %w", err)
			}
			t[key] = fromRusage(&ru)
		}
		return t, eachChild(t, perChild)
	}
}

// eachChild sets t[pid] to f(pid) for every live descendant process.
func eachChild(t totals, f func(pid int) (uint64, error)) error {
	procs, err := procfs.Host.Processes(os.Getpid())
	if err != nil {
		return err
	}
	for _, pid := range procs[1:] {
		v, err := f(pid)
		if errors.Is(err, os.ErrNotExist) {
			continue // it exited
		}
		if err != nil {
			return err
		}
		t[strconv.Itoa(pid)] = v
	}
	return nil
}

// sumThreads adds f over the live threads of process pid.
func sumThreads(pid int, f func(pid, tid int) (uint64, error)) (uint64, error) {
	tids, err := procfs.Host.Threads(pid)
	if err != nil {
		return 0, err
	}
	var n uint64
	for _, tid := range tids {
		v, err := f(pid, tid)
		if errors.Is(err, os.ErrNotExist) {
			continue // the thread exited
		}
		if err != nil {
			return 0, err
		}
		n += v
	}
	return n, nil
}

// processSwitches is a child process's context switches: its live
// threads' voluntary and involuntary ones (a thread that exited took its
// count along).
func processSwitches(pid int) (uint64, error) { return sumThreads(pid, threadSwitches) }

// processFaults is a child process's minor and major page faults, every
// thread's, from /proc/<pid>/stat.
func processFaults(pid int) (uint64, error) {
	st, err := procfs.Host.Stat(pid)
	return st.MinFlt + st.MajFlt, err
}

// threadSwitches is a thread's voluntary and involuntary context switches.
func threadSwitches(pid, tid int) (uint64, error) {
	st, err := procfs.Host.TaskStatus(pid, tid)
	if err != nil {
		return 0, err
	}
	var n uint64
	for _, k := range []string{"voluntary_ctxt_switches", "nonvoluntary_ctxt_switches"} {
		v, err := st.Int(k)
		if err != nil {
			return 0, err
		}
		n += uint64(v)
	}
	return n, nil
}

// readCPU reads task-clock, the CPU time in ns of this process
// (CLOCK_PROCESS_CPUTIME_ID: every thread, live or exited), of its
// children reaped meanwhile (RUSAGE_CHILDREN) and of each thread of its
// live child processes (procfs's ProcessCPU: its live threads'
// schedstat; utime+stime in ticks where the kernel has no schedstat).
// This process's clock is read last when a region starts and first when it stops, so that reading the children's
// /proc files is not counted as the row's CPU time.
func readCPU(starting bool) (t totals, err error) {
	t = totals{}
	readSelf := func() error {
		var ts unix.Timespec
		if err := unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts); err != nil {
			return fmt.Errorf("clock_gettime(CLOCK_PROCESS_CPUTIME_ID): %w", err)
		}
		t["self"] = uint64(ts.Nano())
		return nil
	}
	if !starting {
		if err := readSelf(); err != nil {
			return nil, err
		}
	} else {
		defer func() {
			if err == nil {
				err = readSelf()
			}
		}()
	}
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_CHILDREN, &ru); err != nil {
		return nil, fmt.Errorf("getrusage(RUSAGE_CHILDREN): %w", err)
	}
	t["reaped"] = uint64(ru.Utime.Nano() + ru.Stime.Nano())
	err = eachChild(t, func(pid int) (uint64, error) {
		d, _, err := procfs.Host.ProcessCPU(pid)
		return uint64(d), err
	})
	return t, err
}
