//go:build linux

package perfevent

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/skip"
)

// paranoidFile holds kernel.perf_event_paranoid; a variable for tests.
var paranoidFile = "/proc/sys/kernel/perf_event_paranoid"

// paranoidHint says, for a refused perf_event_open, what
// kernel.perf_event_paranoid allows here and how to be allowed more.
// Without CAP_PERFMON (or CAP_SYS_ADMIN before 5.8) a process may count:
// at -1 anything; at 0 whole CPUs too; at 1 its own tasks, kernel
// included; at 2 its own tasks in user space only; at 3, a Debian and
// Ubuntu patch, nothing at all. An LSM or a container's seccomp profile
// can refuse perf_event_open whatever the setting.
func paranoidHint() string {
	const get = "run as root, give the test binary CAP_PERFMON (setcap cap_perfmon+ep), or lower kernel.perf_event_paranoid"
	b, err := os.ReadFile(paranoidFile)
	if err != nil {
		return "counting the kernel, whole CPUs or other users' tasks needs root or CAP_PERFMON; " + get + fmt.Sprintf(" (not readable here: %v)", err)
	}
	v := strings.TrimSpace(string(b))
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

// SkipIfRefused skips tb when err is a refusal of perf_event_open for
// lack of privilege (fs.ErrPermission: EACCES or EPERM, whose message
// names kernel.perf_event_paranoid and how to be allowed), or says the
// machine cannot count it (skip.IfNotSupported); it fails tb on any other
// error and returns when err is nil. For tests that open perf events:
// users run them unprivileged, where Debian's and Ubuntu's kernels refuse
// every perf_event_open.
func SkipIfRefused(tb testing.TB, err error) {
	tb.Helper()
	if errors.Is(err, fs.ErrPermission) {
		tb.Skipf("perf events refused: %v", err)
	}
	skip.IfNotSupported(tb, err)
}
