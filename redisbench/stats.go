package redisbench

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/kbench/kbench/internal/redisserver"
)

// CmdStat is one command's line of INFO commandstats.
type CmdStat struct{ Calls, Failed, Rejected int64 }

// CommandStats reads INFO commandstats, keyed by lower-case command name.
// failed_calls and rejected_calls exist since Redis 6.2; older servers
// leave them zero.
func CommandStats(ctx context.Context, c *redis.Conn) (map[string]CmdStat, error) {
	s, err := c.Info(ctx, "commandstats").Result()
	if err != nil {
		return nil, err
	}
	out := map[string]CmdStat{}
	for k, v := range redisserver.ParseInfo(s) {
		name, ok := strings.CutPrefix(k, "cmdstat_")
		if !ok {
			continue
		}
		var st CmdStat
		for f := range strings.SplitSeq(v, ",") {
			key, val, _ := strings.Cut(f, "=")
			n, err := strconv.ParseInt(val, 10, 64)
			switch key {
			case "calls":
				if err != nil {
					return nil, fmt.Errorf("commandstats %s: %q", k, v)
				}
				st.Calls = n
			case "failed_calls":
				st.Failed = n
			case "rejected_calls":
				st.Rejected = n
			}
		}
		out[name] = st
	}
	return out, nil
}

// CheckCalls compares the calls between two INFO commandstats snapshots
// with want, per command, and requires no failed or rejected calls.
func CheckCalls(before, after map[string]CmdStat, want map[string]int64) error {
	var bad []string
	for _, name := range slices.Sorted(maps.Keys(want)) {
		d := after[name].Calls - before[name].Calls
		if d != want[name] {
			bad = append(bad, fmt.Sprintf("%s: server counted %d calls, benchmark sent %d", name, d, want[name]))
		}
		if f := after[name].Failed - before[name].Failed; f != 0 {
			bad = append(bad, fmt.Sprintf("%s: %d failed calls", name, f))
		}
		if r := after[name].Rejected - before[name].Rejected; r != 0 {
			bad = append(bad, fmt.Sprintf("%s: %d rejected calls", name, r))
		}
	}
	if bad != nil {
		return fmt.Errorf("INFO commandstats disagrees with the requests sent: %s", strings.Join(bad, "; "))
	}
	return nil
}

// ClockTick is USER_HZ, the unit of utime and stime in /proc/<pid>/stat
// (100 on every Linux architecture Go supports).
const ClockTick = 10 * time.Millisecond

// ProcessCPU returns the CPU time pid's threads have used and the
// resolution of that figure: the sum of each thread's
// /proc/<pid>/task/<tid>/schedstat run time in ns (CONFIG_SCHED_INFO, in
// distribution kernels), else utime+stime from /proc/<pid>/stat in 10 ms
// ticks, too coarse for short runs.
func ProcessCPU(pid int) (cpu, resolution time.Duration, err error) {
	if cpu, err := schedstatCPU(pid); err == nil {
		return cpu, time.Nanosecond, nil
	}
	cpu, err = statCPU(pid)
	return cpu, ClockTick, err
}

func schedstatCPU(pid int) (time.Duration, error) {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tids, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	var sum time.Duration
	for _, tid := range tids {
		data, err := os.ReadFile(dir + "/" + tid.Name() + "/schedstat")
		if errors.Is(err, fs.ErrNotExist) {
			if _, serr := os.Stat(dir + "/" + tid.Name()); serr != nil {
				continue // the thread exited meanwhile
			}
		}
		if err != nil {
			return 0, err
		}
		f := strings.Fields(string(data))
		if len(f) < 1 {
			return 0, fmt.Errorf("%s/%s/schedstat: %q", dir, tid.Name(), data)
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s/%s/schedstat: %q", dir, tid.Name(), data)
		}
		sum += time.Duration(ns)
	}
	return sum, nil
}

func statCPU(pid int) (time.Duration, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no ')' in %q", pid, s)
	}
	f := strings.Fields(s[i+1:]) // f[0] is field 3 (state)
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f)+2)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: utime %q stime %q", pid, f[11], f[12])
	}
	return time.Duration(utime+stime) * ClockTick, nil
}
