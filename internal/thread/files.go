//go:build linux

package thread

import (
	"errors"
	"fmt"
	"sync"

	"github.com/kbench/kbench/internal/skip"
	"golang.org/x/sys/unix"
)

// ErrNotRunThread is returned by UnshareFiles outside a Run function.
var ErrNotRunThread = errors.New("thread: UnshareFiles outside a thread.Run function: the private fd table would outlive the caller on a thread the runtime reuses")

// UnshareFiles gives the calling thread its own copy of the process's fd
// table (unshare(CLONE_FILES)), as a forked process has one. Fds it opens
// from then on exist only in its table, and, as in a single-threaded
// process, the kernel looks its fds up without taking a reference on the
// file for each syscall (the table has one user) and allocates them
// without contending with other threads for the table's lock.
//
// It works only on a Run thread, and returns ErrNotRunThread elsewhere: on
// the main thread or a thread the runtime reuses, the private table would
// follow every goroutine later scheduled there (the netpoller's epoll fd
// and every fd opened since would be missing from it). The copy also
// holds every fd the process had open at the call, until the thread
// exits and the table with it. Where a seccomp profile or an LSM refuses
// unshare, the error wraps skip.ErrNotSupported.
func UnshareFiles() error {
	if !onRunThread() {
		return ErrNotRunThread
	}
	filesMu.RLock()
	err := unix.Unshare(unix.CLONE_FILES)
	filesMu.RUnlock()
	return unshareError(err)
}

// unshareError explains unshare(CLONE_FILES)'s err (nil for none).
func unshareError(err error) error {
	switch err {
	case nil:
		return nil
	case unix.EPERM, unix.ENOSYS:
		u := &skip.Unsupported{
			Feature: "unshare(CLONE_FILES), for a private fd table per thread as a forked process has",
			Err:     err,
			Hint:    "a seccomp profile (Docker's default blocks unshare without CAP_SYS_ADMIN) or an LSM refused it; run on the host or with --security-opt seccomp=unconfined",
		}
		if err == unix.ENOSYS {
			// unshare(2) came in Linux 2.6.16 (unshare(2); Version
			// holds 2.6): a newer kernel without it is a sandbox's
			// answer, which the kernel matrix must not pass as a
			// skip. EPERM is a privilege, which no release decides.
			u.Since = skip.Version{Major: 2, Minor: 6}
		}
		return u
	}
	return fmt.Errorf("unshare(CLONE_FILES): %s", skip.Errno(err))
}

// filesMu keeps UnshareFiles from copying the fd table while HoldFiles
// is held.
var filesMu sync.RWMutex

// HoldFiles makes UnshareFiles wait until release is called. A caller
// whose fds must never be copied into a private table holds it while they
// exist: starting a child process opens the exec status pipe, whose write
// end held in a copy would keep os/exec waiting for ever for the child's
// exec, and the child's end of its control socket, which held in a copy
// would hide the child's death from its parent.
func HoldFiles() (release func()) {
	filesMu.Lock()
	return filesMu.Unlock
}
