//go:build linux

// Package limits works out, before a benchmark row starts, whether this
// machine can give it the fds, tasks and CPUs it needs, and turns a
// shortfall into a skip that names the limit (RLIMIT_NOFILE,
// RLIMIT_NPROC, the affinity mask or cpuset), what the row needs and why,
// what the machine has, and how to get more. A limit is a property of the
// machine: a row that cannot fit skips, as a missing kernel feature does,
// rather than failing halfway with EMFILE or EAGAIN.
//
// Each row computes its own need from its parameters (sockets per flow,
// pipes per child, the fds child.Start holds) and passes the formula as
// the reason; this package adds what is in use now, measured at the time:
// the open fds of the calling thread's table, the tasks of the real user.
//
// The errors are *Shortfall, which wraps skip.ErrNotSupported, so that
// skip.IfNotSupported skips the row.
package limits

import (
	"errors"
	"fmt"
	"math"
	"os"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/cpus"
	"github.com/kbench/kbench/internal/procfs"
	"github.com/kbench/kbench/internal/skip"
	"golang.org/x/sys/unix"
)

// Shortfall is a limit too low for a row.
type Shortfall struct {
	Limit string // "RLIMIT_NOFILE", "RLIMIT_NPROC", "CPU affinity"
	What  string // what the row would do, e.g. "16 flows as processes"
	Need  int64  // the total the row needs, in the limit's terms
	Why   string // how Need is made up, e.g. "20 open + 16 flows x 7"
	Have  int64  // what the limit gives
	Hint  string // how to get more
}

func (e *Shortfall) Error() string {
	return fmt.Sprintf("%s too low for %s: needs %d (%s), has %d; %s", e.Limit, e.What, e.Need, e.Why, e.Have, e.Hint)
}

// Is makes errors.Is(err, skip.ErrNotSupported) true.
func (e *Shortfall) Is(target error) bool { return target == skip.ErrNotSupported }

// Nofile returns the RLIMIT_NOFILE soft and hard limits. The Go runtime
// raises the soft limit to one below the hard one when the test binary
// starts (and gives the children it execs the original back), so the soft
// limit here follows the shell's hard limit (ulimit -Hn), and ulimit -n,
// which sets both, is what lowers it.
func Nofile() (soft, hard uint64, err error) {
	var r unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &r); err != nil {
		return 0, 0, fmt.Errorf("getrlimit(RLIMIT_NOFILE): %s", skip.Errno(err))
	}
	return r.Cur, r.Max, nil
}

// OpenFds counts the open fds of the calling thread's fd table, not
// counting the directory fd it opens to look. It works on a thread with a
// private fd table too (procfs.FS.ThreadFds).
func OpenFds() (int, error) { return Used(math.MaxUint64) }

// Used counts the open fds numbered below limit in the calling thread's
// fd table, as OpenFds does. These are the ones that take room under a
// soft limit of limit: the kernel gives each new fd the lowest free
// number and refuses one (EMFILE) that would reach the limit, while fds
// above it (inherited from a parent with a higher limit, such as go
// test's own) stay open and take none. A table too full to open the
// directory (EMFILE) has every number below the soft limit in use, so
// Used then returns limit where limit is at most the soft limit.
func Used(limit uint64) (int, error) {
	fds, err := procfs.Host.ThreadFds()
	if errors.Is(err, unix.EMFILE) {
		if soft, _, serr := Nofile(); serr == nil && limit <= soft {
			return int(limit), nil
		}
	}
	if err != nil {
		return 0, err
	}
	n := 0
	for _, fd := range fds {
		if uint64(fd) < limit {
			n++
		}
	}
	return n, nil
}

// Fds checks that the calling thread's fd table can hold extra more fds
// than it holds now: the fds open below the RLIMIT_NOFILE soft limit
// (Used) plus extra must not exceed it. why says how extra is made up,
// from the row's parameters.
func Fds(what string, extra int, why string) error {
	soft, _, err := Nofile()
	if err != nil {
		return err
	}
	open, err := Used(soft)
	if err != nil {
		return err
	}
	return CheckFds(what, soft, open, extra, why)
}

// CheckFds is Fds for a table with open fds below a soft limit of soft,
// for rows that plan with those figures themselves.
func CheckFds(what string, soft uint64, open, extra int, why string) error {
	need := int64(open) + int64(extra)
	if soft >= uint64(need) {
		return nil
	}
	return &Shortfall{
		Limit: "RLIMIT_NOFILE", What: what, Need: need, Have: int64(soft),
		Why:  fmt.Sprintf("%d open now + %d: %s", open, extra, why),
		Hint: fmt.Sprintf("raise the open file limit to at least %d (ulimit -n %d)", need, need),
	}
}

// Tasks checks that the real user may have extra more tasks (processes
// and threads: the kernel counts every clone against RLIMIT_NPROC) than
// it has now. The limit is not enforced for root or with CAP_SYS_RESOURCE
// or CAP_SYS_ADMIN, and then Tasks returns nil at once (in a user
// namespace the kernel holds its root to the limit all the same, which
// Tasks does not see). The tasks now are those of the user visible in
// /proc; in a PID namespace the kernel may count more (the user's tasks
// outside it), which no row can see.
func Tasks(what string, extra int, why string) error {
	var r unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NPROC, &r); err != nil {
		return fmt.Errorf("getrlimit(RLIMIT_NPROC): %s", skip.Errno(err))
	}
	if r.Cur == unix.RLIM_INFINITY || exempt() {
		return nil
	}
	now, err := procfs.Host.UserTasks(os.Getuid())
	if err != nil {
		return err
	}
	return tasksFit(what, r.Cur, now, extra, why)
}

func tasksFit(what string, soft uint64, now, extra int, why string) error {
	need := int64(now) + int64(extra)
	if soft >= uint64(need) {
		return nil
	}
	return &Shortfall{
		Limit: "RLIMIT_NPROC", What: what, Need: need, Have: int64(soft),
		Why:  fmt.Sprintf("%d tasks of uid %d now + %d: %s", now, os.Getuid(), extra, why),
		Hint: fmt.Sprintf("raise the user's process limit to at least %d (ulimit -u %d)", need, need),
	}
}

// TasksLimited reports whether RLIMIT_NPROC applies to this process: it
// is finite, and the process is not exempt (see Tasks).
func TasksLimited() bool {
	var r unix.Rlimit
	return unix.Getrlimit(unix.RLIMIT_NPROC, &r) == nil && r.Cur != unix.RLIM_INFINITY && !exempt()
}

// exempt reports whether RLIMIT_NPROC does not apply to this process: its
// real uid is root, or it has CAP_SYS_RESOURCE or CAP_SYS_ADMIN (the
// kernel's check in copy_process).
func exempt() bool {
	return os.Getuid() == 0 || hasCap(unix.CAP_SYS_RESOURCE) || hasCap(unix.CAP_SYS_ADMIN)
}

// CPUs returns the usable CPUs (online and in the affinity mask, which a
// cpuset narrows) when there are at least need of them, and otherwise a
// Shortfall naming the affinity mask.
func CPUs(what string, need int) ([]int, error) {
	usable, err := cpus.Usable()
	if err != nil {
		return nil, err
	}
	if len(usable) < need {
		return usable, &Shortfall{
			Limit: "CPU affinity (cpuset)", What: what, Need: int64(need), Have: int64(len(usable)),
			Why:  fmt.Sprintf("CPUs usable now: %v", usable),
			Hint: "run on a machine with more CPUs or widen the affinity mask or cpuset (taskset -c, docker --cpuset-cpus)",
		}
	}
	return usable, nil
}

// NeedCPUs returns the usable CPUs, skipping tb (naming the affinity mask
// or cpuset) when there are fewer than n, for what, such as "two sides
// pinned to CPUs of their own".
func NeedCPUs(tb testing.TB, what string, n int) []int {
	tb.Helper()
	usable, err := CPUs(what, n)
	skip.IfNotSupported(tb, err)
	return usable
}

// MayRaise reports whether this process may raise its hard limits
// (CAP_SYS_RESOURCE in its effective set), as a child it starts may then
// too.
func MayRaise() bool { return hasCap(unix.CAP_SYS_RESOURCE) }

// hasCap reports whether capability c is in this thread's effective set.
func hasCap(c int) bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	return data[c/32].Effective&(1<<(c%32)) != 0
}

// SoftLimitFor returns the soft RLIMIT_NOFILE that would leave exactly
// extra fd numbers free in the calling thread's table, for tests that
// show a row's count is exact: it runs at that limit and fails one
// below. Fds above the result (go test leaves one far up) take no room.
func SoftLimitFor(extra int) (uint64, error) {
	soft, _, err := Nofile()
	if err != nil {
		return 0, err
	}
	// Used(s) only falls as s does, so this settles.
	for {
		n, err := Used(soft)
		if err != nil {
			return 0, err
		}
		next := uint64(n + extra)
		if next == soft {
			return soft, nil
		}
		soft = next
	}
}

// SettleFds waits until the calling thread's fd table has held the same
// number of fds for four looks 50 ms apart, for tests that measure a
// row's need right after another run: that run's child processes and
// sockets are closed by the runtime on its own time, which a slow or
// emulated machine stretches. It waits as long as that takes.
func SettleFds() error {
	last, same := -1, 0
	for same < 4 {
		n, err := Used(^uint64(0))
		if err != nil {
			return err
		}
		if n == last {
			same++
		} else {
			last, same = n, 0
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}
