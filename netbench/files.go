//go:build linux

package netbench

import (
	"fmt"
	"strings"
	"sync"

	"github.com/kbench/kbench/internal/procfs"
	"github.com/kbench/kbench/internal/thread"
	"golang.org/x/sys/unix"
)

// privateFiles says whether flow threads can have private fd tables, as
// netperf's and netserver's single-threaded processes do; probed once, on
// a throw-away thread. Where it cannot (a seccomp profile refuses
// unshare), flows share the process's table and the fingerprint says so.
var privateFiles = sync.OnceValue(func() error { return thread.Run(thread.UnshareFiles) })

// ownFiles gives the calling flow thread its own fd table where the
// machine allows it and, with sweep, closes in it every socket but keep
// (-1 for none): the copy starts with all the process's fds, and a
// control connection or another flow's socket held there would stay
// open, with no FIN to its peer, until this thread ends. The table dies
// with the thread, closing whatever the flow left open in it. A flow's
// own process (mm=separate) holds no other flow's socket, and its
// control socket must stay usable from the flow's thread: no sweep.
func ownFiles(keep int, sweep bool) error {
	if privateFiles() != nil {
		return nil
	}
	if err := thread.UnshareFiles(); err != nil {
		return err
	}
	if !sweep {
		return nil
	}
	return closeSocketsExcept(keep)
}

// closeSocketsExcept closes every socket in the calling thread's fd
// table but keep. Other fds (the Go runtime's epoll and eventfd, files)
// stay.
func closeSocketsExcept(keep int) error {
	fds, err := procfs.Host.ThreadFds()
	if err != nil {
		return fmt.Errorf("listing the flow thread's fds: %w", err)
	}
	for _, fd := range fds {
		if fd == keep {
			continue
		}
		if l, err := procfs.Host.ThreadFdTarget(fd); err == nil && strings.HasPrefix(l, "socket:") {
			unix.Close(fd)
		}
	}
	return nil
}

// fdTables describes the flows' fd tables for the fingerprint.
func fdTables() string {
	if err := privateFiles(); err != nil {
		return "shared by the flow threads (" + err.Error() + ")"
	}
	return "private per flow thread"
}
