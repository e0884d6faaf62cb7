//go:build linux

package child

import (
	"os"

	"github.com/kbench/kbench/internal/procfs"
)

// Children lists this process's descendant processes: for tests and
// checks that no child is left. procfs walks the process tree: every
// thread's /proc/<pid>/task/<tid>/children (a child is listed under the
// thread that forked it) and, on kernels built without that file
// (CONFIG_PROC_CHILDREN), a scan of /proc/*/stat for the parent id, so
// that a check never passes by reading nothing.
func Children() ([]int, error) {
	procs, err := procfs.Host.Processes(os.Getpid())
	if err != nil {
		return nil, err
	}
	return procs[1:], nil
}
