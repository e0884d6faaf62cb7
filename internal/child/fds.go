//go:build linux

package child

import (
	"errors"
	"fmt"
	"sync"

	"github.com/kbench/kbench/internal/limits"
	"github.com/kbench/kbench/internal/procfs"
	"golang.org/x/sys/unix"
)

// ParentFds is how many fds one started child holds open in this process
// until it is reaped (Wait or Kill): its control socket, the
// read end of its stderr pipe, and the pidfd os.StartProcess keeps for it.
const ParentFds = 3

// StartFds is how many fds Start holds open at its peak beyond the
// child's ParentFds, for a child that inherits inherited fds: the child's
// end of the control socket, a copy of each inherited fd, /dev/null for
// its stdin and for its stdout, the write end of its stderr pipe, and the
// two ends of os.StartProcess's exec status pipe. All are closed before
// Start returns.
func StartFds(inherited int) int { return 6 + inherited }

// Fds is the most fds this process holds for n children, each inheriting
// inherited fds, started one after another and kept until the last has
// started: n×ParentFds, and StartFds(inherited) while the last starts.
func Fds(n, inherited int) int { return n*ParentFds + StartFds(inherited) }

// CheckTasks checks that the user may start n more child processes of
// Tasks() tasks each (limits.Tasks). Where RLIMIT_NPROC does not apply
// it returns nil without probing.
func CheckTasks(what string, n int) error {
	if !limits.TasksLimited() {
		return nil
	}
	per, err := Tasks()
	if err != nil {
		return err
	}
	return limits.Tasks(what, n*per, fmt.Sprintf("%d child processes x %d tasks each once ready (measured on a probe child)", n, per))
}

// Tasks returns how many tasks (threads, each counted against
// RLIMIT_NPROC) a child process of this binary runs once its role is
// ready, measured once per process on a probe child: its main thread,
// the Go runtime's sysmon and the threads it starts at init, and the
// throw-away thread of the role. A child may start more later (a GC
// worker, a thread for a blocking call), so this is a floor.
func Tasks() (int, error) { return probeTasks() }

var probeTasks = sync.OnceValues(func() (int, error) {
	p, err := Start(Spec{Role: tasksRole})
	if errors.Is(err, unix.EAGAIN) {
		// The kernel refuses a fork with EAGAIN when the user's tasks
		// are at RLIMIT_NPROC: at least one more is needed.
		var r unix.Rlimit
		unix.Getrlimit(unix.RLIMIT_NPROC, &r)
		return 0, &limits.Shortfall{
			Limit: "RLIMIT_NPROC", What: "a probe child process", Need: int64(r.Cur) + 1, Have: int64(r.Cur),
			Why:  "fork refused with EAGAIN: the user's tasks are at the limit",
			Hint: "raise the user's process limit (ulimit -u)",
		}
	}
	if err != nil {
		return 0, err
	}
	defer p.Kill()
	if err := p.Ready(); err != nil {
		return 0, err
	}
	tids, err := procfs.Host.Threads(p.Pid)
	if err != nil {
		return 0, fmt.Errorf("child: counting a probe child's tasks: %v", err)
	}
	if err := p.Go(); err != nil {
		return 0, err
	}
	if err := p.Wait(); err != nil {
		return 0, err
	}
	return len(tids), nil
})

// tasksRole is Tasks' probe: it is ready, then ends.
const tasksRole = "kbench-tasks-probe"

var _ = Register(tasksRole, func(c *Ctx) error { return c.Ready(nil) })
