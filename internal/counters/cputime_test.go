//go:build linux

package counters

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kbench/kbench/internal/perfevent"
)

// TestCPUTimeCountsChildren: task-clock includes a child process that runs
// through the region (as redis-server does) and one reaped within it.
func TestCPUTimeCountsChildren(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	spin := exec.Command(sh, "-c", "while :; do :; done")
	if err := spin.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { spin.Process.Kill(); spin.Wait() }()
	c := newTally("task-clock", perfevent.Process)
	if err := c.start(); err != nil {
		t.Fatal(err)
	}
	// A live child, spinning for this long...
	time.Sleep(200 * time.Millisecond)
	// ...and a child run and reaped inside the region.
	loop := exec.Command(sh, "-c", "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done")
	if err := loop.Run(); err != nil {
		t.Fatal(err)
	}
	if err := c.stop(); err != nil {
		t.Fatal(err)
	}
	reaped := loop.ProcessState.UserTime() + loop.ProcessState.SystemTime()
	// The spinner shares 1 or more CPUs with the rest of the machine: it
	// got at least a tenth of one in 200 ms, or the machine is not usable.
	sum := time.Duration(c.sum)
	if min := reaped + 20*time.Millisecond; sum < min {
		t.Errorf("CPU time %v over a region with a spinning child and a reaped one of %v: want at least %v", sum, reaped, min)
	}
	if sum > 2*time.Second {
		t.Errorf("CPU time %v over a region of about 0.2 s on this machine's CPUs: counted twice?", sum)
	}
}

// TestTalliesCountOwnWork: in each scope, the context-switch and
// page-fault totals grow by at least this thread's sleeps and fresh pages.
func TestTalliesCountOwnWork(t *testing.T) {
	const n = 20
	page := os.Getpagesize()
	for _, scope := range []perfevent.Scope{perfevent.SystemWide, perfevent.Process} {
		cs, faults := newTally("context-switches", scope), newTally("page-faults", scope)
		mem, err := unix.Mmap(-1, 0, n*page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
		if err != nil {
			t.Fatal(err)
		}
		runtime.LockOSThread()
		for _, tl := range []*tally{cs, faults} {
			if err := tl.start(); err != nil {
				t.Fatal(err)
			}
		}
		for i := range n {
			mem[i*page] = 1
			unix.Nanosleep(&unix.Timespec{Nsec: 100000}, nil)
		}
		for _, tl := range []*tally{cs, faults} {
			if err := tl.stop(); err != nil {
				t.Fatal(err)
			}
		}
		runtime.UnlockOSThread()
		unix.Munmap(mem)
		if cs.sum < n || faults.sum < n {
			t.Errorf("%v: %d context switches and %d page faults for %d sleeps and fresh pages", scope, cs.sum, faults.sum, n)
		}
	}
}

// TestCPUTimeChildReapedInside: a child that ran before the region and is
// reaped inside it counts for its time inside only, though getrusage
// reports its whole life.
func TestCPUTimeChildReapedInside(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	spin := exec.Command(sh, "-c", "while :; do :; done")
	if err := spin.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // its life before the region
	c := newTally("task-clock", perfevent.Process)
	if err := c.start(); err != nil {
		spin.Process.Kill()
		spin.Wait()
		t.Fatal(err)
	}
	before := time.Duration(c.before[strconv.Itoa(spin.Process.Pid)])
	time.Sleep(100 * time.Millisecond)
	spin.Process.Kill()
	spin.Wait()
	if err := c.stop(); err != nil {
		t.Fatal(err)
	}
	life := spin.ProcessState.UserTime() + spin.ProcessState.SystemTime()
	inside, got := life-before, time.Duration(c.sum)
	if before <= 0 || got < inside-20*time.Millisecond || got > inside+inside/10+20*time.Millisecond {
		t.Errorf("child: %v before the region, %v in all; region counted %v, want about %v", before, life, got, inside)
	}
}
