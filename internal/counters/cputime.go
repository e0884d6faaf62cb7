package counters

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kbench/kbench/internal/perfevent"
)

// cpuTime measures task-clock, the CPU time of the test process and its
// child processes, without perf events: per-task perf events are switched
// out and in with their task at every context switch, which cost 11% of
// netbench TCPRR/flows=1 (docs/results.md); clocks and /proc cost nothing
// between the region's edges. This process's time is
// CLOCK_PROCESS_CPUTIME_ID (every thread, live or exited, in ns); each
// live child process's is the sum of its threads' run time in
// /proc/<tid>/schedstat (ns; utime+stime in ticks where the kernel has no
// schedstat); children reaped meanwhile come from RUSAGE_CHILDREN.
type cpuTime struct {
	before cpuSnapshot
	sum    time.Duration
}

type cpuSnapshot struct {
	self   time.Duration
	kids   map[int]time.Duration // per thread of a child process
	reaped time.Duration
}

func (c *cpuTime) start() error {
	var err error
	c.before, err = readCPU(false)
	return err
}

func (c *cpuTime) stop() error {
	after, err := readCPU(true)
	if err != nil {
		return err
	}
	d := (after.self - c.before.self) + (after.reaped - c.before.reaped)
	for tid, t := range after.kids {
		d += t - c.before.kids[tid] // a thread born meanwhile started at 0
	}
	c.sum += d
	return nil
}

// readCPU reads the clocks. This process's own clock is read last when
// a region starts and first when it stops (selfFirst), so that reading
// the children's /proc files is not counted as the row's CPU time.
func readCPU(selfFirst bool) (s cpuSnapshot, err error) {
	readSelf := func() error {
		var ts unix.Timespec
		if err := unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts); err != nil {
			return fmt.Errorf("clock_gettime(CLOCK_PROCESS_CPUTIME_ID): %w", err)
		}
		s.self = time.Duration(ts.Nano())
		return nil
	}
	if selfFirst {
		if err := readSelf(); err != nil {
			return s, err
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
		return s, fmt.Errorf("getrusage(RUSAGE_CHILDREN): %w", err)
	}
	s.reaped = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	procs, err := perfevent.Processes(os.Getpid())
	if err != nil {
		return s, err
	}
	s.kids = map[int]time.Duration{}
	for _, pid := range procs[1:] {
		entries, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "task"))
		if err != nil {
			continue // exited
		}
		for _, e := range entries {
			tid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			t, err := threadCPU(tid)
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			if err != nil {
				return s, err
			}
			s.kids[tid] = t
		}
	}
	return s, nil
}

// clockTick is USER_HZ, the unit of utime and stime in /proc/<tid>/stat.
const clockTick = 100

// threadCPU is a thread's run time: the first field of
// /proc/<tid>/schedstat, else utime+stime of /proc/<tid>/stat.
func threadCPU(tid int) (time.Duration, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/schedstat", tid))
	if err == nil {
		if f := strings.Fields(string(data)); len(f) > 0 {
			if ns, err := strconv.ParseInt(f[0], 10, 64); err == nil {
				return time.Duration(ns), nil
			}
		}
	}
	if errors.Is(err, os.ErrNotExist) {
		if _, statErr := os.Stat(fmt.Sprintf("/proc/%d", tid)); statErr != nil {
			return 0, err // the thread is gone
		}
	}
	data, err = os.ReadFile(fmt.Sprintf("/proc/%d/stat", tid))
	if err != nil {
		return 0, err
	}
	rest := string(data)
	if i := strings.LastIndexByte(rest, ')'); i >= 0 {
		rest = rest[i+1:]
	}
	f := strings.Fields(rest)
	// After the comm: state(0) ... utime(11) stime(12).
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: too few fields", tid)
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: bad utime or stime", tid)
	}
	return time.Duration(u+st) * time.Second / clockTick, nil
}
