//go:build linux

package seccompbench

import (
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/kbench/kbench/internal/seccompfilter"
	"github.com/kbench/kbench/internal/skip"
	"github.com/kbench/kbench/internal/thread"
)

// The raw calls below are what stress-ng's child makes. None may block,
// so they go through RawSyscall: the runtime adds nothing between them.

func errnoOf(e unix.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

// setFilter installs fp on the calling thread with seccomp(2), flags 0
// (no TSYNC: the filter stays on this thread).
func setFilter(fp *unix.SockFprog) error {
	_, _, e := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(fp)))
	return errnoOf(e)
}

// prctlSetFilter is the older interface, prctl(PR_SET_SECCOMP).
func prctlSetFilter(fp *unix.SockFprog) error {
	_, _, e := unix.RawSyscall6(unix.SYS_PRCTL, unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(fp)), 0, 0, 0)
	return errnoOf(e)
}

func setNoNewPrivs() error {
	_, _, e := unix.RawSyscall6(unix.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0, 0)
	return errnoOf(e)
}

func getNotifSizes(flags uintptr) error {
	var sizes [3]uint16
	_, _, e := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_GET_NOTIF_SIZES, flags, uintptr(unsafe.Pointer(&sizes)))
	return errnoOf(e)
}

func getActionAvail(flags uintptr, action *uint32) error {
	_, _, e := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_GET_ACTION_AVAIL, flags, uintptr(unsafe.Pointer(action)))
	return errnoOf(e)
}

// invalidOp is stress-ng's seccomp(~0U, 0, NULL), which must fail.
func invalidOp() error {
	_, _, e := unix.RawSyscall(unix.SYS_SECCOMP, ^uintptr(0)&0xffffffff, 0, 0)
	return errnoOf(e)
}

// seccompActions are the actions stress-ng probes, and ~0U (invalid).
var seccompActions = [...]uint32{
	unix.SECCOMP_RET_KILL_PROCESS,
	unix.SECCOMP_RET_KILL_THREAD,
	unix.SECCOMP_RET_TRAP,
	unix.SECCOMP_RET_ERRNO,
	unix.SECCOMP_RET_USER_NOTIF,
	unix.SECCOMP_RET_TRACE,
	unix.SECCOMP_RET_LOG,
	unix.SECCOMP_RET_ALLOW,
	^uint32(0),
}

// Probe checks, on a throw-away thread, that this kernel lets an
// unprivileged thread with no_new_privs install a seccomp filter.
func Probe() error {
	allow, err := seccompfilter.Assemble(hugeProgram(1))
	if err != nil {
		return err
	}
	return thread.Run(func() error {
		// PR_SET_NO_NEW_PRIVS and seccomp filters both came in Linux
		// 3.5 (prctl(2); commits 259e5e6c75a9 and e2cfabdfd075);
		// seccomp(2) came in 3.17, and before it the filter loads with
		// prctl(PR_SET_SECCOMP), so filters need 3.5.
		if err := setNoNewPrivs(); err != nil {
			return &skip.Unsupported{Feature: "prctl(PR_SET_NO_NEW_PRIVS)", Err: err, Since: skip.Version{Major: 3, Minor: 5}}
		}
		err := setFilter(allow.Fprog())
		if err == unix.ENOSYS {
			err = prctlSetFilter(allow.Fprog())
		}
		if err != nil {
			return &skip.Unsupported{
				Feature: "seccomp filters (SECCOMP_SET_MODE_FILTER)",
				Err:     err,
				Since:   skip.Version{Major: 3, Minor: 5},
				Hint:    "boot a kernel built with CONFIG_SECCOMP_FILTER=y, outside a sandbox that forbids seccomp(2)",
			}
		}
		return nil
	})
}
