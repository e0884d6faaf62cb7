//go:build linux

package procfs

import (
	"os"
	"strings"
)

// TaskComm reads the name of thread tid of process pid (its comm, at
// most 15 bytes).
func (fs FS) TaskComm(pid, tid int) (string, error) {
	data, err := os.ReadFile(fs.taskPath(pid, tid, "comm"))
	return strings.TrimSpace(string(data)), err
}

// Wchan reads where thread tid of process pid sleeps in the kernel: a
// function name, or "0" when it runs or the kernel will not say.
func (fs FS) Wchan(pid, tid int) (string, error) {
	data, err := os.ReadFile(fs.taskPath(pid, tid, "wchan"))
	return string(data), err
}

// KernelStack reads the kernel stack of thread tid of process pid (root
// only): each frame's function, innermost first, as "[<0>] do_exit+0x2a3/0xa90"
// lines give them.
func (fs FS) KernelStack(pid, tid int) ([]string, error) {
	data, err := os.ReadFile(fs.taskPath(pid, tid, "stack"))
	if err != nil {
		return nil, err
	}
	var frames []string
	for l := range strings.SplitSeq(strings.TrimSpace(string(data)), "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			frames = append(frames, f[len(f)-1])
		}
	}
	return frames, nil
}
