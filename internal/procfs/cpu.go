//go:build linux

package procfs

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"time"
)

// Schedstat reads the run time of thread tid of process pid: the first
// field of its schedstat (CONFIG_SCHED_INFO, set in distribution
// kernels), in ns.
func (fs FS) Schedstat(pid, tid int) (time.Duration, error) {
	run, _, err := fs.SchedTimes(pid, tid)
	return run, err
}

// SchedTimes reads both times of thread tid's schedstat: run, the time it
// ran on a CPU, and wait, the time it was runnable on a run queue waiting
// for one.
func (fs FS) SchedTimes(pid, tid int) (run, wait time.Duration, err error) {
	path := fs.taskPath(pid, tid, "schedstat")
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, err
	}
	return ParseSchedstat(path, data)
}

// ParseSchedstat parses the contents of a schedstat file read from path:
// "run wait timeslices", the first two in ns.
func ParseSchedstat(path string, data []byte) (run, wait time.Duration, err error) {
	f := strings.Fields(string(data))
	if len(f) < 2 {
		return 0, 0, syntaxError(path, 1, "run and wait times in ns", string(data))
	}
	var ns [2]int64
	for i := range ns {
		if ns[i], err = strconv.ParseInt(f[i], 10, 64); err != nil || ns[i] < 0 {
			return 0, 0, syntaxError(path, 1, "run and wait times in ns", string(data))
		}
	}
	return time.Duration(ns[0]), time.Duration(ns[1]), nil
}

// ProcessCPU returns the CPU time process pid's threads have used and
// the resolution of that figure: the sum of its live threads' Schedstat
// in ns, else utime+stime of the process's stat (every thread, live or
// exited) in ClockTicks, too coarse for short runs.
func (fs FS) ProcessCPU(pid int) (cpu, resolution time.Duration, err error) {
	if cpu, err := fs.schedstatCPU(pid); err == nil {
		return cpu, time.Nanosecond, nil
	}
	st, err := fs.Stat(pid)
	return st.CPU(), ClockTick, err
}

func (fs FS) schedstatCPU(pid int) (time.Duration, error) {
	tids, err := fs.Threads(pid)
	if err != nil {
		return 0, err
	}
	var sum time.Duration
	for _, tid := range tids {
		ns, err := fs.Schedstat(pid, tid)
		if errors.Is(err, os.ErrNotExist) {
			if _, serr := os.Stat(fs.taskPath(pid, tid, "")); serr != nil {
				continue // the thread exited meanwhile
			}
		}
		if err != nil {
			return 0, err
		}
		sum += ns
	}
	return sum, nil
}
