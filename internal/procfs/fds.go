//go:build linux

package procfs

import (
	"os"
	"strconv"

	"github.com/kbench/kbench/internal/skip"
	"golang.org/x/sys/unix"
)

// ThreadFds lists the fds open in the calling thread's fd table
// (thread-self/fd), leaving out the one it opens to look. It uses raw
// open and getdents calls and no Go file, so that it also works on a
// thread with a private fd table (thread.UnshareFiles), which the
// netpoller must never see. A table too full to open the directory gives
// an error wrapping unix.EMFILE.
func (fs FS) ThreadFds() ([]int, error) {
	dir := fs.Path("thread-self/fd")
	dfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: dir, Err: errno{err}}
	}
	defer unix.Close(dfd)
	names, err := dirNames(dfd, dir)
	if err != nil {
		return nil, err
	}
	fds := make([]int, 0, len(names))
	for _, name := range names {
		if fd, err := strconv.Atoi(name); err == nil && fd != dfd {
			fds = append(fds, fd)
		}
	}
	return fds, nil
}

// ThreadFdTarget says what fd of the calling thread's table is: a path,
// or "socket:[inode]", "pipe:[inode]", "anon_inode:[eventpoll]". It
// opens nothing.
func (fs FS) ThreadFdTarget(fd int) (string, error) {
	return os.Readlink(fs.Path("thread-self/fd/" + strconv.Itoa(fd)))
}

// countDir counts the entries of dir but "." and "..", with raw calls.
func countDir(dir string) (int, error) {
	dfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, &os.PathError{Op: "open", Path: dir, Err: errno{err}}
	}
	defer unix.Close(dfd)
	names, err := dirNames(dfd, dir)
	return len(names), err
}

// dirNames lists the open directory dfd (named dir in errors) with raw
// getdents calls, leaving out "." and "..".
func dirNames(dfd int, dir string) ([]string, error) {
	buf := make([]byte, 8192)
	var names []string
	for {
		nb, err := unix.Getdents(dfd, buf)
		if err != nil {
			return nil, &os.PathError{Op: "getdents", Path: dir, Err: errno{err}}
		}
		if nb == 0 {
			return names, nil
		}
		_, _, names = unix.ParseDirent(buf[:nb], -1, names)
	}
}

// errno prints an errno as skip.Errno does ("EMFILE (too many open
// files)") and still matches it with errors.Is.
type errno struct{ err error }

func (e errno) Error() string { return skip.Errno(e.err) }
func (e errno) Unwrap() error { return e.err }
