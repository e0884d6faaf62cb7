//go:build linux

package procfs

import (
	"errors"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Tasks lists the thread ids of process pid and of every descendant
// process (see Processes).
func (fs FS) Tasks(pid int) ([]int, error) {
	procs, err := fs.Processes(pid)
	if err != nil {
		return nil, err
	}
	var tids []int
	for _, p := range procs {
		ts, err := fs.Threads(p)
		if err != nil {
			if p == pid {
				return nil, err
			}
			continue // the child exited
		}
		tids = append(tids, ts...)
	}
	return tids, nil
}

// Processes lists process pid and its descendant processes, pid first,
// from each thread's children file (CONFIG_PROC_CHILDREN), else a scan
// of every process's stat for parent ids.
func (fs FS) Processes(pid int) ([]int, error) {
	var out []int
	seen := map[int]bool{}
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if seen[p] {
			continue
		}
		seen[p] = true
		ts, err := fs.Threads(p)
		if err != nil {
			if p == pid {
				return nil, err
			}
			continue // the child exited
		}
		out = append(out, p)
		kids, err := fs.children(p, ts)
		if err != nil {
			return nil, err
		}
		queue = append(queue, kids...)
	}
	return out, nil
}

// children lists the child processes of pid's threads tids.
func (fs FS) children(pid int, tids []int) ([]int, error) {
	var kids []int
	for _, tid := range tids {
		data, err := os.ReadFile(fs.taskPath(pid, tid, "children"))
		if errors.Is(err, os.ErrNotExist) && tid == pid {
			if _, statErr := os.Stat(fs.taskPath(pid, tid, "")); statErr == nil {
				return fs.scanChildren(pid)
			}
		}
		if err != nil {
			continue // the thread exited
		}
		for f := range strings.FieldsSeq(string(data)) {
			if k, err := strconv.Atoi(f); err == nil {
				kids = append(kids, k)
			}
		}
	}
	return kids, nil
}

// scanChildren finds pid's children by the parent id in every process's
// stat, for kernels without children files.
func (fs FS) scanChildren(pid int) ([]int, error) {
	pids, err := fs.pids()
	if err != nil {
		return nil, err
	}
	var kids []int
	for _, p := range pids {
		st, err := fs.Stat(p)
		if err != nil {
			continue // it exited
		}
		if st.PPid == pid {
			kids = append(kids, p)
		}
	}
	return kids, nil
}

// UserTasks counts the tasks (threads) of the processes owned by uid: a
// process's directory belongs to its effective uid, and its task
// directory lists its threads. Processes that end while it looks are
// left out.
func (fs FS) UserTasks(uid int) (int, error) {
	pids, err := fs.pids()
	if err != nil {
		return 0, err
	}
	n := 0
	for _, pid := range pids {
		var st unix.Stat_t
		if unix.Stat(fs.procPath(pid, ""), &st) != nil || int(st.Uid) != uid {
			continue
		}
		if c, err := countDir(fs.procPath(pid, "task")); err == nil {
			n += c
		}
	}
	return n, nil
}

// pids lists the processes of the mount: its numbered directories.
func (fs FS) pids() ([]int, error) { return numbered(fs.Dir) }

// numbered lists the numbered entries of dir (pids, tids).
func numbered(dir string) ([]int, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var ids []int
	for _, e := range entries {
		if id, err := strconv.Atoi(e.Name()); err == nil {
			ids = append(ids, id)
		}
	}
	return ids, nil
}
