//go:build linux

// Package procfs reads the kernel's account of processes and threads
// under /proc: a task's status, stat and schedstat, a process's threads,
// and the tree of its descendant processes. It is the one /proc reader of
// the module's per-process files; system-wide tables (softirqs,
// interrupts) stay with the instrument that sums them.
//
// Every reader works below the directory an FS names: Host ("/proc") on
// the running machine, a testdata copy of real /proc files in tests.
package procfs

import (
	"os"
	"path/filepath"
	"strconv"
)

// FS is a proc mount: Dir is where it is mounted.
type FS struct{ Dir string }

// Host is the running machine's /proc.
var Host = FS{Dir: "/proc"}

// taskPath is the path of file in thread tid of process pid.
func (fs FS) taskPath(pid, tid int, file string) string {
	return filepath.Join(fs.Dir, strconv.Itoa(pid), "task", strconv.Itoa(tid), file)
}

// procPath is the path of file in process pid's directory.
func (fs FS) procPath(pid int, file string) string {
	return filepath.Join(fs.Dir, strconv.Itoa(pid), file)
}

// Threads lists the thread ids of process pid, from its task directory.
func (fs FS) Threads(pid int) ([]int, error) {
	entries, err := os.ReadDir(fs.procPath(pid, "task"))
	if err != nil {
		return nil, err
	}
	var tids []int
	for _, e := range entries {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	return tids, nil
}
