//go:build linux

package sockfdbench

import (
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/limits"
	"github.com/kbench/kbench/internal/thread"
	"golang.org/x/sys/unix"
)

func TestGCCollectsCycles(t *testing.T) {
	err := thread.Run(func() error {
		before, err := limits.OpenFds()
		if err != nil {
			return err
		}
		c := newCycler()
		for range 500 {
			if err := c.cycle(); err != nil {
				return err
			}
		}
		if want := 2 * ((500-1)/gcSampleEvery + 1); len(c.sampled) != want {
			t.Errorf("sampled %d sockets of 500 cycles, want %d", len(c.sampled), want)
		}
		return c.waitCollected(before, 30*time.Second)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A socket that is never dropped keeps the collector check failing, both
// by its inode in /proc/net/unix and by the fd table.
func TestGCWaitFires(t *testing.T) {
	err := thread.Run(func() error {
		before, err := limits.OpenFds()
		if err != nil {
			return err
		}
		c := newCycler()
		if err := c.cycle(); err != nil {
			return err
		}
		sv, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(sv[0])
		defer unix.Close(sv[1])
		ino, err := inode(sv[0])
		if err != nil {
			return err
		}
		c.sampled[ino] = true
		return c.waitCollected(before, 200*time.Millisecond)
	})
	if err == nil || !strings.Contains(err.Error(), "1 of 3 sampled sockets") || !strings.Contains(err.Error(), "fd table holds") {
		t.Fatalf("an undropped socket: %v, want the collector check to fire", err)
	}
}
