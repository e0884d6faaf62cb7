//go:build linux

package unixbench

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestLoopsLeaveNoFdAndNoUmaskChange(t *testing.T) {
	before := countFds(t)
	mask := unix.Umask(0o022)
	unix.Umask(mask)
	l, err := New()
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []Work{Mix, Getpid} {
		if err := l.Run(w, 1000); err != nil {
			t.Fatalf("%s: %v", w, err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if after := countFds(t); after != before {
		t.Errorf("fds: %d before, %d after", before, after)
	}
	if now := unix.Umask(mask); now != mask {
		t.Errorf("umask changed from %#o to %#o", mask, now)
	}
}

func TestLoopDetectsWrongAnswer(t *testing.T) {
	l, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	l.pid++ // as if getpid answered for another process
	for _, w := range []Work{Mix, Getpid} {
		if err := l.Run(w, 3); err == nil || !strings.Contains(err.Error(), "getpid returned") {
			t.Errorf("%s: wrong pid not detected: %v", w, err)
		}
	}
	l.pid--
	l.uid++ // as if getuid answered for another user
	if err := l.Run(Mix, 3); err == nil || !strings.Contains(err.Error(), "getuid returned") {
		t.Errorf("wrong uid not detected: %v", err)
	}
	l.uid--
	l.umask ^= 0o7 // as if someone else had changed the umask
	err = l.Run(Mix, 3)
	unix.Umask(processUmask()) // the failed call set the wrong mask
	if err == nil || !strings.Contains(err.Error(), "umask was") {
		t.Errorf("changed umask not detected: %v", err)
	}
	l.umask ^= 0o7
	l.rfd = 1 << 20 // dup of a closed fd fails
	if err := l.Run(Mix, 3); err == nil || !strings.Contains(err.Error(), "dup(") {
		t.Errorf("failing dup not detected: %v", err)
	}
	if err := l.Run("bogus", 1); err == nil {
		t.Error("unknown work accepted")
	}
}

func countFds(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err == nil {
			n++
		}
	}
	return n
}
