//go:build linux

package procfs

import (
	"os"
	"strconv"
	"strings"
	"time"
)

// ClockTick is USER_HZ, the unit of utime and stime in stat files (100
// on every Linux architecture Go supports).
const ClockTick = 10 * time.Millisecond

// Stat holds the fields of a stat file (proc(5)) that the module uses.
// A process's stat sums its threads, live and exited; a task's is one
// thread's.
type Stat struct {
	Pid            int
	Comm           string // may hold spaces and parentheses
	State          byte   // R, S, D, Z, ...
	PPid           int
	Flags          uint64 // the kernel's task flags (PF_*, include/linux/sched.h)
	MinFlt, MajFlt uint64 // page faults
	UTime, STime   uint64 // CPU time in ClockTicks
}

// CPU is utime+stime, to a ClockTick.
func (s Stat) CPU() time.Duration { return time.Duration(s.UTime+s.STime) * ClockTick }

// Stat reads process pid's stat.
func (fs FS) Stat(pid int) (Stat, error) { return readStat(fs.procPath(pid, "stat")) }

// TaskStat reads the stat of thread tid of process pid.
func (fs FS) TaskStat(pid, tid int) (Stat, error) { return readStat(fs.taskPath(pid, tid, "stat")) }

func readStat(path string) (Stat, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Stat{}, err
	}
	return ParseStat(path, data)
}

// ParseStat parses the contents of a stat file read from path: "pid
// (comm) state ppid ...", where comm runs to the last ')'.
func ParseStat(path string, data []byte) (Stat, error) {
	s := string(data)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return Stat{}, syntaxError(path, 1, "pid (comm) state ...", s)
	}
	var st Stat
	var err error
	if st.Pid, err = strconv.Atoi(strings.TrimSpace(s[:open])); err != nil {
		return Stat{}, syntaxError(path, 1, "a pid before the (comm)", s[:open])
	}
	st.Comm = s[open+1 : end]
	// f[0] is field 3 of proc(5), state.
	f := strings.Fields(s[end+1:])
	if len(f) < 13 || len(f[0]) != 1 {
		return Stat{}, syntaxError(path, 1, "a state letter and 12 or more fields after the (comm)", s[end+1:])
	}
	st.State = f[0][0]
	bad := func(name, v string) error { return syntaxError(path, 1, name+" as a decimal number", v) }
	if st.PPid, err = strconv.Atoi(f[1]); err != nil {
		return Stat{}, bad("ppid", f[1])
	}
	for _, u := range []struct {
		name string
		i    int
		v    *uint64
	}{{"flags", 6, &st.Flags}, {"minflt", 7, &st.MinFlt}, {"majflt", 9, &st.MajFlt}, {"utime", 11, &st.UTime}, {"stime", 12, &st.STime}} {
		if *u.v, err = strconv.ParseUint(f[u.i], 10, 64); err != nil {
			return Stat{}, bad(u.name, f[u.i])
		}
	}
	return st, nil
}
