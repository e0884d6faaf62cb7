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
	"github.com/kbench/kbench/internal/procfs"
)

// TestCPUTimeCountsChildren: task-clock includes a child process that runs
// through the region (as redis-server does) and one reaped within it, and
// counts each once: the region's sum is at most what the spinner's own
// schedstat, the reaped child's rusage and this process's clock grew by
// over reads that bracket the region's, and at most the region's wall
// time on every CPU. The bounds follow the region's real length, not a
// fixed one: under TCG the shell loop alone takes about 1-5 s
// (results/2026-12-01-cputime-510.md), while the
// spinner runs beside it.
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
	outer0, err := cpuParts(spin.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	wall := time.Now()
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
	region := time.Since(wall)
	outer1, err := cpuParts(spin.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	reaped := loop.ProcessState.UserTime() + loop.ProcessState.SystemTime()
	sum := time.Duration(c.sum)
	// The spinner shares 1 or more CPUs with the rest of the machine: it
	// got at least a tenth of one in 200 ms, or the machine is not usable.
	if min := reaped + 20*time.Millisecond; sum < min {
		t.Errorf("CPU time %v over a region with a spinning child and a reaped one of %v: want at least %v", sum, reaped, min)
	}
	spun, self := outer1.spin-outer0.spin, outer1.self-outer0.self
	if max := spun + reaped + self + outer1.resolution; sum > max {
		t.Errorf("CPU time %v, more than its parts over a longer span: the spinner's %v, the reaped child's %v and this process's %v: counted twice?", sum, spun, reaped, self)
	}
	if max := region*time.Duration(runtime.NumCPU()) + outer1.resolution; sum > max {
		t.Errorf("CPU time %v over a region of %v on %d CPUs: more than the CPUs had; counted twice?", sum, region, runtime.NumCPU())
	}
}

// cpuTimes are the parts of a region's task-clock, read by the test on
// its own: the spinning child's CPU time (and its resolution) and this
// process's.
type cpuTimes struct{ spin, resolution, self time.Duration }

func cpuParts(spin int) (cpuTimes, error) {
	var c cpuTimes
	var err error
	if c.spin, c.resolution, err = procfs.Host.ProcessCPU(spin); err != nil {
		return c, err
	}
	var ts unix.Timespec
	err = unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts)
	c.self = time.Duration(ts.Nano())
	return c, err
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
