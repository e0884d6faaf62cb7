//go:build linux

package child

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/kbench/kbench/internal/skip"
	"github.com/kbench/kbench/internal/thread"
	"golang.org/x/sys/unix"
)

// Spec says what to run in a child.
type Spec struct {
	Role string
	Args any   // JSON-encoded for the child's Ctx.Args
	Fds  []int // inherited as fd 4, 5, ... (Ctx.File); the caller keeps and closes its own
	Pin  bool  // pin the role's thread to CPU
	CPU  int
}

// ReadyTimeout bounds the wait for a child's ready message: starting a
// process and setting up a side takes milliseconds.
const ReadyTimeout = time.Minute

// token is this process's secret for its children.
var token = sync.OnceValue(func() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
})

// spawn runs fn on the spawner thread: one goroutine locked to its OS
// thread for the rest of the process's life, so that no child's
// parent-death signal fires while the test binary lives (the kernel
// sends it when the forking thread exits, and throw-away threads do).
func spawn(fn func()) {
	spawnOnce.Do(func() {
		go func() {
			runtime.LockOSThread() // never unlocked, never returns
			for f := range spawnReqs {
				f()
			}
		}()
	})
	done := make(chan struct{})
	spawnReqs <- func() { fn(); close(done) }
	<-done
}

var (
	spawnOnce sync.Once
	spawnReqs = make(chan func())
)

// Proc is a started child.
type Proc struct {
	Role string
	Pid  int
	Tgid int // the role's thread's tgid, from the child's /proc, once ready

	cmd    *exec.Cmd
	ctl    *os.File
	r      *bufio.Reader
	stderr *tail

	ready, result json.RawMessage
	ended         bool
	endErr        string
	waited        bool
	waitErr       error
	killed        bool // killed by this package, not by something else
	mu            sync.Mutex
}

// Start starts a child running spec.Role. The role must be registered in
// this binary. A refused fork or exec (a seccomp profile, a process
// limit) is reported as skip.Unsupported.
func Start(spec Spec) (*Proc, error) {
	if _, err := lookup(spec.Role); err != nil {
		return nil, err
	}
	args, err := json.Marshal(spec.Args)
	if err != nil {
		return nil, fmt.Errorf("child: arguments for %s: %v", spec.Role, err)
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("child: finding the test binary: %v", err)
	}
	// No thread may copy the fd table (thread.UnshareFiles) while the
	// child's end of the control socket, its inherited copies and the
	// exec status pipe exist: they are all closed here before Start
	// returns.
	defer thread.HoldFiles()()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("child: control socketpair: %s", skip.Errno(err))
	}
	theirs := os.NewFile(uintptr(fds[1]), "kbench-control-child")
	defer theirs.Close()
	files := []*os.File{theirs}
	for _, fd := range spec.Fds {
		// A copy, so that the *os.File's close touches only it.
		dup, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
		if err != nil {
			unix.Close(fds[0])
			return nil, fmt.Errorf("child: fd %d for %s: %s", fd, spec.Role, skip.Errno(err))
		}
		f := os.NewFile(uintptr(dup), "kbench-inherited")
		defer f.Close()
		files = append(files, f)
	}
	if err := unix.SetNonblock(fds[0], true); err != nil {
		unix.Close(fds[0])
		return nil, err
	}
	ours := os.NewFile(uintptr(fds[0]), "kbench-control")
	cmd := exec.Command(exe)
	cmd.Args = []string{exe + " [kbench child " + spec.Role + "]"}
	godebug := thread.SoloGODEBUG // a solo process's; the last GODEBUG counts
	if v := os.Getenv("GODEBUG"); v != "" {
		godebug = v + "," + godebug
	}
	cmd.Env = append(os.Environ(), envVar+"="+token(), "GODEBUG="+godebug)
	cmd.ExtraFiles = files
	p := &Proc{Role: spec.Role, cmd: cmd, ctl: ours, r: bufio.NewReader(ours), stderr: &tail{}}
	cmd.Stderr = p.stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	spawn(func() { err = cmd.Start() })
	if err != nil {
		ours.Close()
		if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) || errors.Is(err, unix.ENOSYS) {
			return nil, &skip.Unsupported{
				Feature: "running a benchmark side in a child process (fork and execve of the test binary)",
				Err:     err,
				Hint:    "a seccomp profile or LSM refused it; run where the test binary may execute itself, or use the mm=shared rows",
			}
		}
		return nil, fmt.Errorf("child: starting %s: %w", spec.Role, err)
	}
	p.Pid = cmd.Process.Pid
	hello := msg{K: "hello", Token: token(), Role: spec.Role, Parent: os.Getpid(), D: args}
	if spec.Pin {
		hello.CPU = spec.CPU + 1
	}
	if err := p.send(hello); err != nil {
		p.Kill()
		return nil, p.explain(fmt.Errorf("sending hello: %v", err))
	}
	return p, nil
}

func (p *Proc) send(m msg) error {
	line, err := json.Marshal(m)
	if err != nil {
		return err
	}
	p.ctl.SetWriteDeadline(time.Now().Add(ReadyTimeout))
	_, err = p.ctl.Write(append(line, '\n'))
	return err
}

// next reads the child's next message; deadline zero waits for ever. An
// "end" message with an error, or none at all, is the child's failure.
func (p *Proc) next(want string, deadline time.Duration) (msg, error) {
	if deadline > 0 {
		p.ctl.SetReadDeadline(time.Now().Add(deadline))
	} else {
		p.ctl.SetReadDeadline(time.Time{})
	}
	m, err := readMsg(p.r)
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return m, p.explain(fmt.Errorf("no %s message within %v", want, deadline))
		}
		return m, p.explain(fmt.Errorf("it ended before its %s message", want))
	}
	if m.K == "end" {
		p.ended, p.endErr = true, m.Err
		if m.Err != "" {
			return m, p.explain(errors.New(m.Err))
		}
		if want != "end" {
			return m, p.explain(fmt.Errorf("it ended before its %s message", want))
		}
		return m, nil
	}
	if m.K != want {
		return m, p.explain(fmt.Errorf("sent %q, want %q", m.K, want))
	}
	return m, nil
}

// explain makes err the child's failure: with the role, pid, how the
// process ended if it has, and the tail of its stderr. A child that fails
// is killed and reaped here.
func (p *Proc) explain(err error) error {
	if p.exitedWithin(2 * time.Second) {
		p.reap()
	} else {
		p.Kill()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "child %s (pid %d): %v", p.Role, p.Pid, err)
	if p.waitErr != nil && !p.killedHere() {
		fmt.Fprintf(&b, "; the process %s", describeExit(p.waitErr))
	}
	if s := strings.TrimSpace(p.stderr.String()); s != "" {
		fmt.Fprintf(&b, "; its stderr: %s", s)
	}
	return &Error{Role: p.Role, Pid: p.Pid, msg: b.String()}
}

// exitedWithin reports whether the child has exited or exits within d,
// without reaping it: a child that closed its control socket or sent its
// end is on its way out, and its exit status says more than a kill would.
func (p *Proc) exitedWithin(d time.Duration) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.waited {
		return true
	}
	deadline := time.Now().Add(d)
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, p.Pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
		if err == nil && info.Signo != 0 {
			return true
		}
		if err != nil && err != unix.EINTR || time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
}

// Error is a child's failure.
type Error struct {
	Role string
	Pid  int
	msg  string
}

func (e *Error) Error() string { return e.msg }

func describeExit(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return fmt.Sprintf("was killed by signal %s (by someone else than kbench)", unix.SignalName(ws.Signal()))
		}
		return fmt.Sprintf("exited with status %d", ee.ExitCode())
	}
	return err.Error()
}

func (p *Proc) killedHere() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.killed
}

// Ready waits for the child's ready message and checks that the role
// runs in the child process itself, not in this one.
func (p *Proc) Ready() error {
	m, err := p.next("ready", ReadyTimeout)
	if err != nil {
		return err
	}
	if m.Tgid != p.Pid || m.Pid != p.Pid || m.Tgid == os.Getpid() {
		return p.explain(fmt.Errorf("role thread reports pid %d tgid %d; want its own process, pid %d (this process is %d)", m.Pid, m.Tgid, p.Pid, os.Getpid()))
	}
	p.Tgid = m.Tgid
	p.ready = m.D
	return nil
}

// Info decodes what the role passed to Ready.
func (p *Proc) Info(v any) error { return p.decode(p.ready, v, "ready") }

// Go tells a ready child to begin.
func (p *Proc) Go() error {
	if err := p.send(msg{K: "go"}); err != nil {
		return p.explain(fmt.Errorf("sending go: %v", err))
	}
	return nil
}

// Round starts a further round of a role that runs rounds (Ctx.Next),
// with arguments v: the child sets up and sends ready again (Ready).
func (p *Proc) Round(v any) error {
	m := msg{K: "round"}
	if v != nil {
		d, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("child: round for %s: %v", p.Role, err)
		}
		m.D = d
	}
	if err := p.send(m); err != nil {
		return p.explain(fmt.Errorf("sending round: %v", err))
	}
	return nil
}

// Stop ends a role that runs rounds, after a round's result: its Next
// returns false, and the child ends (Wait).
func (p *Proc) Stop() error {
	if err := p.send(msg{K: "stop"}); err != nil {
		return p.explain(fmt.Errorf("sending stop: %v", err))
	}
	return nil
}

// Result waits for the child's result message and decodes it into v.
func (p *Proc) Result(v any) error {
	m, err := p.next("result", 0)
	if err != nil {
		return err
	}
	p.result = m.D
	return p.decode(m.D, v, "result")
}

func (p *Proc) decode(d json.RawMessage, v any, what string) error {
	if v == nil {
		return nil
	}
	if err := json.Unmarshal(d, v); err != nil {
		return p.explain(fmt.Errorf("bad %s %s: %v", what, d, err))
	}
	return nil
}

// Wait waits for the child's end message and its exit, and fails unless
// the role ended without error and the process exited 0.
func (p *Proc) Wait() error {
	if !p.ended {
		if _, err := p.next("end", 0); err != nil {
			return err
		}
	}
	p.reap()
	if p.waitErr != nil {
		return p.explain(fmt.Errorf("after a clean end: %v", describeExit(p.waitErr)))
	}
	return nil
}

// reap waits for the process once.
func (p *Proc) reap() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.waited {
		return
	}
	p.waited = true
	p.waitErr = p.cmd.Wait()
	p.ctl.Close()
}

// Kill kills the child's process group and reaps the child. Safe to call
// more than once and after Wait.
func (p *Proc) Kill() {
	p.mu.Lock()
	if !p.waited {
		p.killed = true
		unix.Kill(-p.Pid, unix.SIGKILL)
	}
	p.mu.Unlock()
	p.reap()
}

// tail keeps the first 2 KiB written to it (where a panic says why) and
// the last 1 KiB.
type tail struct {
	mu         sync.Mutex
	head, last []byte
	cut        bool
}

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(b)
	if room := 2048 - len(t.head); room > 0 {
		k := min(room, len(b))
		t.head = append(t.head, b[:k]...)
		b = b[k:]
	}
	t.last = append(t.last, b...)
	if over := len(t.last) - 1024; over > 0 {
		t.last = t.last[over:]
		t.cut = true
	}
	return n, nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cut {
		return string(t.head) + " [...] " + string(t.last)
	}
	return string(t.head) + string(t.last)
}

// Killed reports whether this package killed the child (Kill, or a
// sibling's failure), so that its own failure then is an echo.
func (p *Proc) Killed() bool { return p.killedHere() }
