//go:build linux

// Package procfs is the module's one reader of /proc: a task's status,
// stat, schedstat, wchan and kernel stack; a process's threads, maps and
// the tree of its descendants; the tasks of a user; the calling thread's
// fd table; sysctls (/proc/sys); and the system-wide files: the per-CPU
// tables (softirqs, interrupts), stat and vmstat totals, /proc/net's
// netstat and unix, cpuinfo, cmdline, kallsyms and modules. Every other
// package asks it, so that each file's path, format and quirks are
// written once.
//
// Every reader works below the directory an FS names: Host ("/proc") on
// the running machine, a testdata copy of real /proc files in tests (the
// fingerprint reads a whole machine's tree below a root this way). The
// parsers of /proc text are exported for callers that hold the text, and
// fuzzed: a file they cannot read is a *SyntaxError naming the file, the
// line and what was expected there.
package procfs

import (
	"fmt"
	"path/filepath"
	"strconv"
)

// FS is a proc mount: Dir is where it is mounted.
type FS struct{ Dir string }

// Host is the running machine's /proc.
var Host = FS{Dir: "/proc"}

// Path is the path of rel ("net/netstat", "sys/kernel/osrelease") below
// the mount.
func (fs FS) Path(rel string) string { return filepath.Join(fs.Dir, rel) }

// taskPath is the path of file in thread tid of process pid.
func (fs FS) taskPath(pid, tid int, file string) string {
	return filepath.Join(fs.Dir, strconv.Itoa(pid), "task", strconv.Itoa(tid), file)
}

// procPath is the path of file in process pid's directory.
func (fs FS) procPath(pid int, file string) string {
	return filepath.Join(fs.Dir, strconv.Itoa(pid), file)
}

// Threads lists the thread ids of process pid, from its task directory.
func (fs FS) Threads(pid int) ([]int, error) { return numbered(fs.procPath(pid, "task")) }

// SyntaxError says where a /proc file holds text its reader did not
// expect.
type SyntaxError struct {
	Path string // the file, as read
	Line int    // 1-based line number
	Want string // what the reader expected there
	Got  string // what it found, shortened
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%s:%d: want %s, got %q", e.Path, e.Line, e.Want, e.Got)
}

// syntaxError builds a SyntaxError, shortening got to a line's worth.
func syntaxError(path string, line int, want, got string) *SyntaxError {
	const most = 120
	if len(got) > most {
		got = got[:most] + "..."
	}
	return &SyntaxError{Path: path, Line: line, Want: want, Got: got}
}
