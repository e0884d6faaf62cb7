//go:build linux

package thread

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"testing"

	"github.com/kbench/kbench/internal/skip"
	"golang.org/x/sys/unix"
)

// TestUnshareFilesPrivate checks that an fd opened after UnshareFiles is
// not in the process's table, and that the thread's copy, which holds the
// write end of a pipe the process has closed, goes with the thread.
func TestUnshareFilesPrivate(t *testing.T) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[0])
	opened := make(chan int)
	release := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		errc <- Run(func() error {
			if err := UnshareFiles(); err != nil {
				close(opened)
				return err
			}
			fd, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
			if err != nil {
				close(opened)
				return err
			}
			opened <- fd
			<-release
			return nil
		})
	}()
	fd, ok := <-opened
	if !ok {
		skip.IfNotSupported(t, <-errc)
		t.Fatal("UnshareFiles failed without an error")
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != unix.EBADF {
		t.Errorf("fd %d opened on the unshared thread: fcntl in the process's table = %v, want EBADF", fd, err)
	}
	unix.Close(p[1]) // the thread's copy still holds the write end
	if n, err := unix.Poll([]unix.PollFd{{Fd: int32(p[0]), Events: unix.POLLIN}}, 0); err != nil || n != 0 {
		t.Errorf("pipe reader ready (n=%d, %v) while the thread's copy holds the writer", n, err)
	}
	close(release)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	fds := []unix.PollFd{{Fd: int32(p[0]), Events: unix.POLLIN}}
	if n, err := unix.Poll(fds, 5000); err != nil || n != 1 || fds[0].Revents&unix.POLLHUP == 0 {
		t.Fatalf("pipe reader after the thread exited: n=%d revents=%#x err=%v, want POLLHUP (the copy closed the writer)", n, fds[0].Revents, err)
	}
}

// TestUnshareFilesRefusedOutsideRun: on a thread the runtime will reuse
// (here a goroutine's locked thread, which exits with it) or on the main
// thread, a private fd table would follow every goroutine later scheduled
// there, so UnshareFiles refuses and leaves the table shared.
func TestUnshareFilesRefusedOutsideRun(t *testing.T) {
	type answer struct {
		err    error
		shared bool
	}
	done := make(chan answer, 1)
	go func() {
		runtime.LockOSThread() // no unlock: should it unshare, the thread dies with the goroutine
		err := UnshareFiles()
		// An fd opened now is in the process's table only if the thread
		// still shares it.
		fd, oerr := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		shared := false
		if oerr == nil {
			shared = sharesFd(fd)
			unix.Close(fd)
		}
		done <- answer{err, shared}
	}()
	a := <-done
	if !errors.Is(a.err, ErrNotRunThread) {
		t.Errorf("UnshareFiles on a pooled thread returned %v, want ErrNotRunThread", a.err)
	}
	if !a.shared {
		t.Error("the pooled thread's fd table is no longer the process's")
	}
	if !errors.Is(mainUnshareErr, ErrNotRunThread) {
		t.Errorf("UnshareFiles on the main thread returned %v, want ErrNotRunThread", mainUnshareErr)
	}
}

// sharesFd reports whether fd is in the process's table, as the main
// thread sees it (/proc/self/fd is the thread group leader's table).
func sharesFd(fd int) bool {
	_, err := os.Lstat(fmt.Sprintf("/proc/self/fd/%d", fd))
	return err == nil
}

// TestUnshareErrorSince: only ENOSYS, which no kernel since 2.6.16 gives
// of itself, names a release; EPERM, a sandbox's or a privilege's, does not.
func TestUnshareErrorSince(t *testing.T) {
	for _, tc := range []struct {
		err   error
		since bool
	}{{unix.ENOSYS, true}, {unix.EPERM, false}} {
		var u *skip.Unsupported
		if err := unshareError(tc.err); !errors.As(err, &u) {
			t.Errorf("%v: %v, want a skip.Unsupported", tc.err, err)
		} else if !u.Since.IsZero() != tc.since {
			t.Errorf("%v: Since %v, want set %v", tc.err, u.Since, tc.since)
		}
	}
	if err := unshareError(unix.EINVAL); err == nil || errors.Is(err, skip.ErrNotSupported) {
		t.Errorf("EINVAL: %v, want a plain error", err)
	}
}
