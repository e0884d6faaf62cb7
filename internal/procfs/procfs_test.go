//go:build linux

package procfs

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The fixtures are real /proc files copied from a Linux 6.x machine: a
// python3 process (pid 9309, threads 9309 and 9350) and its child 9351, a
// copy of sleep(1) named "a) b (c) d" so that its comm holds spaces and
// parentheses. testdata/nochildren is the same tree without the
// children files (a kernel without CONFIG_PROC_CHILDREN).
var (
	tree       = FS{Dir: filepath.Join("testdata", "tree")}
	noChildren = FS{Dir: filepath.Join("testdata", "nochildren")}
)

func TestStatFixture(t *testing.T) {
	st, err := tree.Stat(9351)
	if err != nil {
		t.Fatal(err)
	}
	want := Stat{Pid: 9351, Comm: "a) b (c) d", State: 'S', PPid: 9309, Flags: 4194304, MinFlt: 75}
	if st != want {
		t.Errorf("Stat(9351) = %+v, want %+v", st, want)
	}
	st, err = tree.TaskStat(9309, 9309)
	if err != nil {
		t.Fatal(err)
	}
	if st.Comm != "python3" || st.PPid != 9304 || st.MinFlt == 0 {
		t.Errorf("TaskStat(9309, 9309) = %+v", st)
	}
	if p, _ := tree.Stat(9309); p.UTime != 5 || p.STime != 1 || p.CPU() != 60*time.Millisecond {
		t.Errorf("Stat(9309): utime %d stime %d CPU %v, want 5, 1 and 60ms", p.UTime, p.STime, p.CPU())
	}
}

func TestParseStatRejects(t *testing.T) {
	for _, bad := range []string{
		"",
		"9351 a b S 1 2 3",       // no parentheses
		"9351 (sleep) S 1 2 3 4", // too few fields
		"9351 (sleep) S x 9304 2815 0 -1 4194304 75 0 0 0 0 0 0",   // ppid
		"9351 (sleep) S 1 9304 2815 0 -1 4194304 75 0 0 0 z 0 0 0", // utime
	} {
		if st, err := ParseStat("bad", []byte(bad)); err == nil {
			t.Errorf("ParseStat(%q) = %+v, want an error", bad, st)
		}
	}
}

func TestSchedstatAndCPUFixture(t *testing.T) {
	ns, err := tree.Schedstat(9309, 9350)
	if err != nil || ns != 84386 {
		t.Errorf("Schedstat(9309, 9350) = %v, %v; want 84386ns", ns, err)
	}
	run, wait, err := tree.SchedTimes(9309, 9350)
	if err != nil || run != 84386 || wait != 133823 {
		t.Errorf("SchedTimes(9309, 9350) = %v, %v, %v; want 84386ns, 133823ns", run, wait, err)
	}
	if st, err := tree.TaskStat(9309, 9350); err != nil || st.Flags != 4194368 {
		t.Errorf("TaskStat(9309, 9350).Flags = %d, %v; want 4194368 (PF_FORKNOEXEC|PF_RANDOMIZE)", st.Flags, err)
	}
	cpu, res, err := tree.ProcessCPU(9309)
	if err != nil || res != time.Nanosecond || cpu != 70683672+84386 {
		t.Errorf("ProcessCPU(9309) = %v, %v, %v; want both threads' schedstat, 70.768058ms to 1ns", cpu, res, err)
	}
	// Without schedstat files, the process's stat in ticks.
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(tree.Dir)); err != nil {
		t.Fatal(err)
	}
	paths, _ := filepath.Glob(filepath.Join(dir, "*", "task", "*", "schedstat"))
	for _, p := range paths {
		os.Remove(p)
	}
	cpu, res, err = FS{Dir: dir}.ProcessCPU(9309)
	if err != nil || res != ClockTick || cpu != 60*time.Millisecond {
		t.Errorf("ProcessCPU(9309) without schedstat = %v, %v, %v; want 60ms to a tick", cpu, res, err)
	}
}

func TestStatusFixture(t *testing.T) {
	s, err := tree.TaskStatus(9309, 9350)
	if err != nil {
		t.Fatal(err)
	}
	v, err1 := s.Int("voluntary_ctxt_switches")
	n, err2 := s.Int("nonvoluntary_ctxt_switches")
	if v != 1 || n != 3 || err1 != nil || err2 != nil {
		t.Errorf("thread 9350: %d voluntary and %d nonvoluntary switches (%v, %v), want 1 and 3", v, n, err1, err2)
	}
	if s, err := tree.Status(9351); err != nil {
		t.Error(err)
	} else if name, _ := s.String("Name"); name != "a) b (c) d" {
		t.Errorf("Status(9351) Name = %q", name)
	}
}

func TestTreeFixture(t *testing.T) {
	for _, fs := range []FS{tree, noChildren} {
		procs, err := fs.Processes(9309)
		if err != nil || !slices.Equal(procs, []int{9309, 9351}) {
			t.Errorf("%s: Processes(9309) = %v, %v; want [9309 9351]", fs.Dir, procs, err)
		}
		tids, err := fs.Tasks(9309)
		if err != nil || !slices.Equal(tids, []int{9309, 9350, 9351}) {
			t.Errorf("%s: Tasks(9309) = %v, %v; want [9309 9350 9351]", fs.Dir, tids, err)
		}
		if _, err := fs.Processes(1); err == nil {
			t.Errorf("%s: Processes of a pid not in the tree: no error", fs.Dir)
		}
	}
}

// TestTasksListsSelfAndChild walks this machine's /proc, by children
// files and by the scan of every stat.
func TestTasksListsSelfAndChild(t *testing.T) {
	cmd := exec.Command("sleep", "10")
	if err := cmd.Start(); err != nil {
		t.Skipf("no sleep(1): %v", err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tids, err := Host.Tasks(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(tids, os.Getpid()) || !slices.Contains(tids, unix.Gettid()) || !slices.Contains(tids, cmd.Process.Pid) {
		t.Errorf("Tasks = %v: want the main thread %d, this thread %d and the child %d", tids, os.Getpid(), unix.Gettid(), cmd.Process.Pid)
	}
	kids, err := Host.scanChildren(os.Getpid())
	if err != nil || !slices.Contains(kids, cmd.Process.Pid) {
		t.Errorf("scanChildren = %v, %v: want child %d", kids, err, cmd.Process.Pid)
	}
}

// TestProcessCPU burns 100ms of this thread's CPU time, by the kernel's
// own per-thread clock, and requires both sources to see it. Spinning for
// wall time instead would fail on a loaded machine.
func TestProcessCPU(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	threadCPU := func() time.Duration {
		var ts unix.Timespec
		if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
			t.Fatal(err)
		}
		return time.Duration(ts.Nano())
	}
	pid := os.Getpid()
	cpu0, res, err := Host.ProcessCPU(pid)
	stat0, serr := Host.Stat(pid)
	if err != nil || serr != nil {
		t.Fatal(err, serr)
	}
	for start := threadCPU(); threadCPU()-start < 100*time.Millisecond; {
	}
	cpu1, _, err := Host.ProcessCPU(pid)
	stat1, serr := Host.Stat(pid)
	if err != nil || serr != nil {
		t.Fatal(err, serr)
	}
	// The process's other threads may add CPU; none can take it away.
	if d := cpu1 - cpu0; d < 90*time.Millisecond || d > 5*time.Second {
		t.Errorf("ProcessCPU (resolution %v) grew by %v over 100ms of CPU", res, d)
	}
	// stat counts in clock ticks (10ms), so allow a few ticks of rounding.
	if d := stat1.CPU() - stat0.CPU(); d < 60*time.Millisecond || d > 5*time.Second {
		t.Errorf("/proc/%d/stat grew by %v over 100ms of CPU", pid, d)
	}
}
