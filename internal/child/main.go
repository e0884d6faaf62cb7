//go:build linux

package child

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"unsafe"

	"github.com/kbench/kbench/internal/cpus"
	"github.com/kbench/kbench/internal/procfs"
	"github.com/kbench/kbench/internal/thread"
	"golang.org/x/sys/unix"
)

// Selected reports whether this process was started as a child: the
// private variable is set. Main then decides whether it really was.
func Selected() bool {
	_, ok := os.LookupEnv(envVar)
	return ok
}

// Ctx is a role's link to its parent.
type Ctx struct {
	hello msg
	w     *os.File
	r     *bufio.Reader
	tgid  int  // the role thread's, read at the first Ready
	ready bool // Ready was called this round
	sent  bool // Result was sent this round
	ran   bool // Ready was called at all
}

// ErrStopped is returned by Ready when the parent ended the run before
// saying go; the role should return it.
var ErrStopped = errors.New("child: parent stopped the run before it began")

// Args decodes the arguments the parent gave Start.
func (c *Ctx) Args(v any) error {
	if err := json.Unmarshal(c.hello.D, v); err != nil {
		return fmt.Errorf("child: role %s: bad arguments %s: %v", c.hello.Role, c.hello.D, err)
	}
	return nil
}

// File returns the fd of inherited file i (Spec.Fds[i]): 4+i.
func (c *Ctx) File(i int) int { return ctlFd + 1 + i }

// Ready tells the parent the role is set up, with info (nil for none),
// and waits for the parent's go. It reports the calling thread's tgid from
// /proc, so call it on the role's thread. A role that runs several rounds
// (Next) calls it once per round.
func (c *Ctx) Ready(info any) error {
	if c.ready {
		return errors.New("child: Ready called twice in one round")
	}
	c.ready, c.ran, c.sent = true, true, false
	if c.tgid == 0 {
		st, err := procfs.ThreadSelf()
		if err != nil {
			return fmt.Errorf("child: reading /proc/thread-self/status: %v", err)
		}
		tgid, err := st.Int("Tgid")
		if err != nil {
			return fmt.Errorf("child: Tgid from %s: %v", st.Path, err)
		}
		c.tgid = tgid
	}
	if err := c.send(msg{K: "ready", Pid: os.Getpid(), Tgid: c.tgid}, info); err != nil {
		return err
	}
	m, err := c.recv()
	if err != nil {
		return err
	}
	switch m.K {
	case "go":
		return nil
	case "stop":
		return ErrStopped
	}
	return fmt.Errorf("child: parent sent %q, want go or stop", m.K)
}

// Next waits for the parent's next round (Proc.Round) and decodes its
// arguments into v (nil: none); it returns false when the parent ends the
// run instead (Proc.Stop). A role that runs rounds calls Next before each
// round's Ready, and after the round's Result.
func (c *Ctx) Next(v any) (bool, error) {
	if c.ready && !c.sent {
		return false, errors.New("child: Next called in a round that has sent no Result")
	}
	c.ready = false
	m, err := c.recv()
	if err != nil {
		return false, err
	}
	switch m.K {
	case "round":
		if v != nil {
			if err := json.Unmarshal(m.D, v); err != nil {
				return false, fmt.Errorf("child: role %s: bad round %s: %v", c.hello.Role, m.D, err)
			}
		}
		return true, nil
	case "stop":
		return false, nil
	}
	return false, fmt.Errorf("child: parent sent %q, want round or stop", m.K)
}

// Result sends the role's counts to the parent, once per round, after its
// loop; the parent's clock stops when every child of a group has sent one.
func (c *Ctx) Result(v any) error {
	if c.sent || !c.ready {
		return errors.New("child: Result called twice in a round, or before Ready")
	}
	c.sent = true
	return c.send(msg{K: "result"}, v)
}

func (c *Ctx) send(m msg, v any) error {
	if v != nil {
		d, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("child: encoding %s: %v", m.K, err)
		}
		m.D = d
	}
	line, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if _, err := c.w.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("child: control socket: %v", err)
	}
	return nil
}

func (c *Ctx) recv() (msg, error) {
	return readMsg(c.r)
}

func readMsg(r *bufio.Reader) (msg, error) {
	var m msg
	line, err := r.ReadBytes('\n')
	if err != nil {
		return m, fmt.Errorf("control socket: %w", err)
	}
	if err := json.Unmarshal(line, &m); err != nil {
		return m, fmt.Errorf("control socket: bad line %q: %v", line, err)
	}
	return m, nil
}

// Main runs the role this process was started for and returns the exit
// status: 0 after a clean run, 1 after the role's error, 2 when the
// process was not started by a parent through Start (the variable set by
// hand, no control socket, a wrong token) or cannot run its role safely.
func Main() int {
	token := os.Getenv(envVar)
	os.Unsetenv(envVar) // a grandchild needs its own
	refuse := func(format string, a ...any) int {
		fmt.Fprintf(os.Stderr, "kbench: %s is set but this is no kbench child: %s\n", envVar, fmt.Sprintf(format, a...))
		return 2
	}
	var st unix.Stat_t
	if err := unix.Fstat(ctlFd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		return refuse("fd %d is not a control socket", ctlFd)
	}
	unix.CloseOnExec(ctlFd) // a grandchild gets its own
	// Non-blocking, so the runtime's poller takes it and creates its epoll
	// fd now, in the process's fd table. Created later, from a role
	// thread that unshared its table (CLONE_FILES), the epoll fd would
	// exist only there, and the runtime's other threads would find it
	// closed (fatal error: netpoll failed).
	if err := unix.SetNonblock(ctlFd, true); err != nil {
		return refuse("fd %d: %v", ctlFd, err)
	}
	f := os.NewFile(ctlFd, "kbench-control")
	c := &Ctx{w: f, r: bufio.NewReader(f)}
	hello, err := c.recv()
	if err != nil {
		return refuse("%v", err)
	}
	if hello.K != "hello" || token == "" || hello.Token != token {
		return refuse("the control socket did not give this process's token")
	}
	c.hello = hello
	end := func(err error) int {
		m := msg{K: "end"}
		if err != nil {
			m.Err = err.Error()
		}
		if serr := c.send(m, nil); serr != nil && err == nil {
			err = serr
		}
		if err != nil {
			return 1
		}
		return 0
	}
	// The parent-death signal must hold before the role runs: it is what
	// ends this process should the test binary die.
	sig, err := pdeathsig()
	switch {
	case err != nil:
		return end(fmt.Errorf("child: prctl(PR_GET_PDEATHSIG): %v", err))
	case sig != int(unix.SIGKILL):
		return end(fmt.Errorf("child: parent-death signal is %d, want SIGKILL; refusing to run a role that could outlive its parent", sig))
	case unix.Getppid() != hello.Parent:
		return end(fmt.Errorf("child: parent is pid %d, want %d: the test binary has gone", unix.Getppid(), hello.Parent))
	}
	role, err := lookup(hello.Role)
	if err != nil {
		return end(err)
	}
	// The process exists for its role, as a C benchmark process does: one
	// P and raw blocking calls (thread.Solo); the role runs on a
	// throw-away thread as in the test binary, pinned when asked.
	if err := thread.Solo(); err != nil {
		// Only the monitor's priority is lost (speed, not the row's
		// work): a kernel or sandbox without /proc's syscall files or
		// sched_setattr still runs the row; the error reaches the
		// parent's report with the child's stderr if the row fails.
		fmt.Fprintln(os.Stderr, "kbench child:", err)
	}
	err = thread.Run(func() error {
		if hello.CPU > 0 {
			if err := cpus.Pin(hello.CPU - 1); err != nil {
				return err
			}
		}
		return role(c)
	})
	if err == nil && !c.ran {
		err = fmt.Errorf("child: role %s returned without calling Ready", hello.Role)
	}
	if err != nil {
		err = fmt.Errorf("%s (pid %d): %w", hello.Role, os.Getpid(), err)
	}
	return end(err)
}

// pdeathsig reads the parent-death signal (PR_GET_PDEATHSIG stores it
// through its pointer argument).
func pdeathsig() (int, error) {
	var sig int32
	_, _, e := unix.RawSyscall6(unix.SYS_PRCTL, unix.PR_GET_PDEATHSIG, uintptr(unsafe.Pointer(&sig)), 0, 0, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(sig), nil
}
