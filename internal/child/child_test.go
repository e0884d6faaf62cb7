//go:build linux

package child_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"golang.org/x/sys/unix"

	"github.com/kbench/kbench/internal/benchmain"
	"github.com/kbench/kbench/internal/child"
	"github.com/kbench/kbench/internal/cpus"
	"github.com/kbench/kbench/internal/procfs"
	"github.com/kbench/kbench/internal/skip"
	"github.com/kbench/kbench/internal/thread"
)

func TestMain(m *testing.M) { os.Exit(benchmain.Main(m)) }

type echoArgs struct{ N int }

var _ = child.Register("test-echo", func(c *child.Ctx) error {
	var a echoArgs
	if err := c.Args(&a); err != nil {
		return err
	}
	if err := c.Ready(a); err != nil {
		return err
	}
	return c.Result(2 * a.N)
})

var _ = child.Register("test-fail", func(c *child.Ctx) error {
	if err := c.Ready(nil); err != nil {
		return err
	}
	return errors.New("boom 42")
})

var _ = child.Register("test-sleep", func(c *child.Ctx) error {
	if err := c.Ready(nil); err != nil {
		return err
	}
	time.Sleep(time.Hour)
	return nil
})

var _ = child.Register("test-cpu", func(c *child.Ctx) error {
	cpu, err := cpus.Current()
	if err != nil {
		return err
	}
	return c.Ready(cpu)
})

// soloInfo is what a test-solo child saw of its runtime.
type soloInfo struct {
	Procs int
	Solo  bool
	Idle  []string // the system call (number) of each of its SCHED_IDLE threads
	Debug string   // its GODEBUG
	Echo  uint64
}

// soloResult is what a test-solo child did: rounds echoed, yields made.
type soloResult struct{ Rounds, Yields int }

// idleThreads lists, for each thread of this process in SCHED_IDLE, the
// number of the system call it is in, from /proc.
func idleThreads() ([]string, error) {
	tids, err := procfs.Host.Threads(os.Getpid())
	if err != nil {
		return nil, err
	}
	var idle []string
	for _, tid := range tids {
		attr, err := unix.SchedGetAttr(tid, 0)
		if err != nil {
			return nil, err
		}
		if attr.Policy == unix.SCHED_IDLE {
			b, _ := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/syscall", tid))
			idle = append(idle, strings.Fields(string(b) + " ?")[0])
		}
	}
	return idle, nil
}

// test-solo reports its GOMAXPROCS, solo flag and idle threads, then echoes 8 bytes
// from fd 4 to fd 5 with blocking calls through thread.Syscall6, as the
// benchmarks' loops make them, ticking a Yielder before each read; it
// fails if a yield brought it back on another thread.
var _ = child.Register("test-solo", func(c *child.Ctx) error {
	in, out := c.File(0), c.File(1)
	idle, err := idleThreads()
	if err != nil {
		return err
	}
	if err := c.Ready(soloInfo{Procs: runtime.GOMAXPROCS(0), Solo: thread.IsSolo(), Idle: idle, Debug: os.Getenv("GODEBUG")}); err != nil {
		return err
	}
	var buf [8]byte
	var y thread.Yielder
	var res soloResult
	for ; ; res.Rounds++ {
		if y.Tick(thread.Clock()) {
			res.Yields++
		}
		r, _, e := thread.Syscall6(unix.SYS_READ, uintptr(in), uintptr(unsafe.Pointer(&buf[0])), 8, 0, 0, 0)
		if e != 0 {
			return fmt.Errorf("read: %w", e)
		}
		if r == 0 {
			if err := y.Err(); err != nil {
				return err
			}
			return c.Result(res)
		}
		if _, _, e := thread.Syscall6(unix.SYS_WRITE, uintptr(out), uintptr(unsafe.Pointer(&buf[0])), r, 0, 0, 0); e != 0 {
			return fmt.Errorf("write: %w", e)
		}
	}
})

// test-parent starts a grandchild and reports its pid, then waits to be
// killed.
var _ = child.Register("test-parent", func(c *child.Ctx) error {
	gc, err := child.Start(child.Spec{Role: "test-sleep"})
	if err != nil {
		return err
	}
	if err := gc.Ready(); err != nil {
		return err
	}
	if err := c.Ready(gc.Pid); err != nil {
		return err
	}
	time.Sleep(time.Hour)
	return nil
})

type startOutcome struct {
	Err         string
	Unsupported bool
}

// test-noexec refuses execve in its whole process (a seccomp filter on
// every thread), then tries to start a child.
var _ = child.Register("test-noexec", func(c *child.Ctx) error {
	err := seccomp.LoadFilter(seccomp.Filter{
		NoNewPrivs: true,
		Flag:       seccomp.FilterFlagTSync,
		Policy: seccomp.Policy{
			DefaultAction: seccomp.ActionAllow,
			Syscalls: []seccomp.SyscallGroup{{
				Action: seccomp.ActionErrno,
				Names:  []string{"execve", "execveat"},
			}},
		},
	})
	if err != nil {
		return fmt.Errorf("loading the seccomp filter: %v", err)
	}
	var out startOutcome
	p, err := child.Start(child.Spec{Role: "test-echo", Args: echoArgs{1}})
	if err == nil {
		err = p.Ready()
		p.Kill()
	}
	if err != nil {
		out = startOutcome{err.Error(), errors.Is(err, skip.ErrNotSupported)}
	}
	return c.Ready(out)
})

func TestRoundTrip(t *testing.T) {
	var procs []*child.Proc
	defer func() {
		for _, p := range procs {
			p.Kill()
		}
	}()
	for i := range 3 {
		p, err := child.Start(child.Spec{Role: "test-echo", Args: echoArgs{i + 1}})
		if err != nil {
			t.Fatal(err)
		}
		procs = append(procs, p)
	}
	for i, p := range procs {
		if err := p.Ready(); err != nil {
			t.Fatal(err)
		}
		var got echoArgs
		if err := p.Info(&got); err != nil || got.N != i+1 {
			t.Errorf("child %d ready with %+v, %v", i, got, err)
		}
		if p.Tgid == os.Getpid() || p.Tgid != p.Pid {
			t.Errorf("child %d: tgid %d, pid %d, this process %d", i, p.Tgid, p.Pid, os.Getpid())
		}
	}
	for i, p := range procs {
		if err := p.Go(); err != nil {
			t.Fatal(err)
		}
		var r int
		if err := p.Result(&r); err != nil {
			t.Fatal(err)
		}
		if err := p.Wait(); err != nil {
			t.Fatal(err)
		}
		if r != 2*(i+1) {
			t.Errorf("child %d result %d, want %d", i, r, 2*(i+1))
		}
		noProcess(t, p.Pid)
	}
}

func TestRoleErrorFailsWithItsMessage(t *testing.T) {
	p, err := child.Start(child.Spec{Role: "test-fail"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Kill()
	if err := p.Ready(); err != nil {
		t.Fatal(err)
	}
	if err := p.Go(); err != nil {
		t.Fatal(err)
	}
	err = p.Result(nil)
	if err == nil || !strings.Contains(err.Error(), "boom 42") || !strings.Contains(err.Error(), "test-fail") {
		t.Fatalf("failing role: %v, want its message", err)
	}
	noProcess(t, p.Pid)
}

// A child killed in the middle of a run fails it, saying so, and is gone.
func TestKilledChildFailsTheRun(t *testing.T) {
	p, err := child.Start(child.Spec{Role: "test-sleep"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Kill()
	if err := p.Ready(); err != nil {
		t.Fatal(err)
	}
	p.Go()
	time.AfterFunc(50*time.Millisecond, func() { unix.Kill(p.Pid, unix.SIGKILL) })
	err = p.Result(nil)
	if err == nil || !strings.Contains(err.Error(), "killed by signal SIGKILL") {
		t.Fatalf("killed child: %v, want a message naming SIGKILL", err)
	}
	noProcess(t, p.Pid)
}

// SIGKILL of a process that started children kills them: their
// parent-death signal.
func TestParentKilledLeavesNoChild(t *testing.T) {
	p, err := child.Start(child.Spec{Role: "test-parent"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Kill()
	if err := p.Ready(); err != nil {
		t.Fatal(err)
	}
	var gc int
	if err := p.Info(&gc); err != nil || gc <= 0 {
		t.Fatalf("grandchild pid %d, %v", gc, err)
	}
	if !alive(gc) {
		t.Fatalf("grandchild %d not running before the kill", gc)
	}
	unix.Kill(p.Pid, unix.SIGKILL) // the process only, not its group
	deadline := time.Now().Add(5 * time.Second)
	for alive(gc) {
		if time.Now().After(deadline) {
			unix.Kill(gc, unix.SIGKILL)
			t.Fatalf("grandchild %d still running 5 s after its parent was killed", gc)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestUnknownRole(t *testing.T) {
	_, err := child.Start(child.Spec{Role: "no-such-role"})
	if err == nil || !strings.Contains(err.Error(), `no role "no-such-role"`) {
		t.Fatalf("unknown role: %v", err)
	}
}

// The variable set by hand is refused: no control socket, no token.
func TestVariableByHandIsRefused(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), "_KBENCH_CHILD=test-echo")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), "no kbench child") {
		t.Fatalf("hand-set variable: %v, output %q; want exit 2 and a refusal", err, out)
	}
}

// A process that may not execve gets a skip.Unsupported naming the cause.
func TestExecRefusedIsUnsupported(t *testing.T) {
	p, err := child.Start(child.Spec{Role: "test-noexec"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Kill()
	if err := p.Ready(); err != nil {
		t.Fatal(err)
	}
	var out startOutcome
	if err := p.Info(&out); err != nil {
		t.Fatal(err)
	}
	if !out.Unsupported || !strings.Contains(out.Err, "EPERM") {
		t.Fatalf("start under a filter refusing execve: %+v, want skip.Unsupported naming EPERM", out)
	}
	t.Log(out.Err)
}

func TestPinned(t *testing.T) {
	usable, err := cpus.Usable()
	if err != nil {
		t.Fatal(err)
	}
	cpu := usable[len(usable)-1]
	p, err := child.Start(child.Spec{Role: "test-cpu", Pin: true, CPU: cpu})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Kill()
	if err := p.Ready(); err != nil {
		t.Fatal(err)
	}
	var got int
	if err := p.Info(&got); err != nil || got != cpu {
		t.Fatalf("child pinned to CPU %d runs on %d (%v)", cpu, got, err)
	}
}

// TestSolo checks that a child runs its role in a solo process (one P,
// the runtime's monitor thread in SCHED_IDLE, asleep in nanosleep,
// GODEBUG with SoloGODEBUG after the user's)
// and that blocking calls through thread.Syscall6 work there, the parent
// feeding it through a pipe with pauses longer than a monitor tick.
func TestSolo(t *testing.T) {
	t.Setenv("GODEBUG", "madvdontneed=1")
	var toChild, fromChild [2]int
	if err := unix.Pipe2(toChild[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	if err := unix.Pipe2(fromChild[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	p, err := child.Start(child.Spec{Role: "test-solo", Fds: []int{toChild[0], fromChild[1]}})
	unix.Close(toChild[0])
	unix.Close(fromChild[1])
	defer unix.Close(fromChild[0])
	if err != nil {
		unix.Close(toChild[1])
		t.Fatal(err)
	}
	defer p.Kill()
	if err := p.Ready(); err != nil {
		t.Fatal(err)
	}
	var info soloInfo
	if err := p.Info(&info); err != nil {
		t.Fatal(err)
	}
	if info.Procs != 1 || !info.Solo {
		t.Errorf("child role ran with GOMAXPROCS=%d, solo=%v; want 1, true", info.Procs, info.Solo)
	}
	if want := "madvdontneed=1," + thread.SoloGODEBUG; info.Debug != want {
		t.Errorf("child's GODEBUG is %q, want %q (the test's and the solo process's)", info.Debug, want)
	}
	if _, err := os.ReadFile("/proc/self/syscall"); err != nil {
		t.Logf("no monitor thread check: %v (thread.Solo leaves it at the normal policy)", err)
	} else if !thread.MayLeaveIdle() {
		if len(info.Idle) != 0 {
			t.Errorf("child's threads in SCHED_IDLE are in system calls %q, want none: this process may not leave SCHED_IDLE, so thread.Solo leaves the monitor alone", info.Idle)
		}
	} else {
		// The monitor is in nanosleep or running; threads it started
		// (under load it hands Ps to new ones) inherit SCHED_IDLE and
		// park in futex until the runtime uses them, and thread.Run moves
		// a loop off the idle policy. An idle thread anywhere else is a
		// fault.
		nanosleep, futex := fmt.Sprint(unix.SYS_NANOSLEEP), fmt.Sprint(unix.SYS_FUTEX)
		monitor := 0
		for _, c := range info.Idle {
			switch c {
			case nanosleep, "running":
				monitor++
			case futex:
			default:
				monitor = -len(info.Idle)
			}
		}
		if monitor < 1 {
			t.Errorf("child's threads in SCHED_IDLE are in system calls %q, want the monitor's nanosleep (%s) and at most parked threads (futex, %s)", info.Idle, nanosleep, futex)
		}
	}
	if err := p.Go(); err != nil {
		t.Fatal(err)
	}
	const rounds = 5
	for i := range rounds {
		time.Sleep(15 * time.Millisecond) // the child waits in a raw read past sysmon's 10 ms
		var buf [8]byte
		buf[0] = byte(i + 1)
		if _, err := unix.Write(toChild[1], buf[:]); err != nil {
			t.Fatal(err)
		}
		var got [8]byte
		if n, err := unix.Read(fromChild[0], got[:]); err != nil || n != 8 || got != buf {
			t.Fatalf("round %d: echo %v (%d bytes, %v), want %v", i, got, n, err, buf)
		}
	}
	unix.Close(toChild[1])
	var res soloResult
	if err := p.Result(&res); err != nil {
		t.Fatal(err)
	}
	// Each round's read waited 15 ms, past YieldEvery: every tick but the
	// first yields, each without leaving the role's thread.
	if res.Rounds != rounds || res.Yields < rounds-1 {
		t.Errorf("child echoed %d rounds with %d yields, want %d rounds and at least %d yields", res.Rounds, res.Yields, rounds, rounds-1)
	}
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}
}

// alive reports whether pid runs (a zombie does not).
func alive(pid int) bool {
	st, err := procfs.Host.Stat(pid)
	return err == nil && st.State != 'Z'
}

func noProcess(t *testing.T, pid int) {
	t.Helper()
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
		t.Errorf("child %d still exists (running or unreaped)", pid)
	}
}
