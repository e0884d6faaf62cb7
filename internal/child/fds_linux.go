package child

// ParentFds is how many fds one started child holds open in this process
// until it is reaped (Wait, Kill or Group.Close): its control socket, the
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

// MinTasks is the fewest tasks (threads) a child process runs, counted
// against RLIMIT_NPROC: its main thread, the Go runtime's sysmon, and the
// throw-away thread its role runs on. The runtime starts more as it needs
// them (GC workers, threads blocked in syscalls), so this is a floor.
const MinTasks = 3
