//go:build linux

package perfevent

import (
	"fmt"
	"strconv"

	"github.com/kbench/kbench/internal/procfs"
	"github.com/kbench/kbench/internal/skip"
	"golang.org/x/sys/unix"
)

// proc is where the perf sysctls are read; tests point it at a fixture.
var proc = procfs.Host

// OpenError is the error Open returns when perf_event_open(attr, pid,
// cpu) fails with errno: the one explanation of a failed open, which
// callers wrap with what they were doing and do not explain again (their
// tests use it to play a refusal or a missing PMU).
//
//   - ENOENT, EOPNOTSUPP, ENODEV: the kernel or the CPU's PMU lacks the
//     event; ENOSYS: the kernel has no perf events. A skip.Unsupported.
//   - EACCES, EPERM: refused for lack of privilege, a skip.Unsupported
//     whose hint says what kernel.perf_event_paranoid allows here and how
//     to be allowed more; it also wraps fs.ErrPermission.
//   - EINVAL for a sampling event at a frequency: a plain error naming
//     kernel.perf_event_max_sample_rate.
//   - anything else: a plain error with the errno.
func OpenError(name string, attr *unix.PerfEventAttr, pid, cpu int, errno error) error {
	where := fmt.Sprintf("perf_event_open(%s, pid=%d, cpu=%d)", name, pid, cpu)
	switch errno {
	case unix.ENOENT, unix.EOPNOTSUPP, unix.ENODEV:
		return &skip.Unsupported{Feature: where, Err: errno, Hint: "the kernel or the CPU's PMU does not offer it"}
	case unix.ENOSYS:
		// No Since: every kernel since 2.6.31 has the call, so ENOSYS
		// is the build, not the release.
		return &skip.Unsupported{Feature: where, Err: errno, Hint: "the kernel was built without CONFIG_PERF_EVENTS"}
	case unix.EACCES, unix.EPERM:
		return &skip.Unsupported{Feature: where, Err: errno, Hint: paranoidHint()}
	case unix.EINVAL:
		if attr != nil && attr.Bits&unix.PerfBitFreq != 0 {
			return fmt.Errorf("%s: %s; is %d Hz above kernel.perf_event_max_sample_rate (%s)?: %w",
				where, skip.Errno(errno), attr.Sample, sysctl("kernel.perf_event_max_sample_rate"), errno)
		}
	}
	return fmt.Errorf("%s: %s: %w", where, skip.Errno(errno), errno)
}

// sysctl is a sysctl's value for a message, or "unreadable".
func sysctl(name string) string {
	v, err := proc.Sysctl(name)
	if err != nil {
		return "unreadable"
	}
	return v
}

// paranoidHint says, for a refused perf_event_open, what
// kernel.perf_event_paranoid allows here and how to be allowed more.
// Without CAP_PERFMON (or CAP_SYS_ADMIN before 5.8) a process may count:
// at -1 anything; at 0 whole CPUs too; at 1 its own tasks, kernel
// included; at 2 its own tasks in user space only; at 3, a Debian and
// Ubuntu patch, nothing at all. An LSM or a container's seccomp profile
// can refuse perf_event_open whatever the setting.
func paranoidHint() string {
	const get = "run as root, give the test binary CAP_PERFMON (setcap cap_perfmon+ep), or lower kernel.perf_event_paranoid"
	v, err := proc.Sysctl("kernel.perf_event_paranoid")
	if err != nil {
		return "counting the kernel, whole CPUs or other users' tasks needs root or CAP_PERFMON; " + get + fmt.Sprintf(" (not readable here: %v)", err)
	}
	n, err := strconv.Atoi(v)
	switch {
	case err != nil:
		return fmt.Sprintf("kernel.perf_event_paranoid is %q; %s", v, get)
	case n >= 3:
		return fmt.Sprintf("kernel.perf_event_paranoid is %d, which refuses every perf_event_open without CAP_PERFMON (a Debian and Ubuntu patch); %s (2 counts this user's processes in user space)", n, get)
	case n == 2:
		return fmt.Sprintf("kernel.perf_event_paranoid is 2: without CAP_PERFMON only this user's processes, in user space; %s (1 lets it count the kernel, 0 whole CPUs)", get)
	case n == 1:
		return fmt.Sprintf("kernel.perf_event_paranoid is 1: without CAP_PERFMON only this user's processes; %s (0 lets it count whole CPUs)", get)
	}
	return fmt.Sprintf("kernel.perf_event_paranoid is %d, yet perf_event_open was refused: an LSM or the container's seccomp profile may refuse it; run with CAP_PERFMON or outside that profile", n)
}
