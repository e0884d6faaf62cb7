//go:build linux

package prctlbench

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/kbench/kbench/internal/child"
	"github.com/kbench/kbench/internal/cpus"
	"github.com/kbench/kbench/internal/limits"
	"github.com/kbench/kbench/internal/procfs"
	"github.com/kbench/kbench/internal/thread"
)

// pingPong is UnixBench's context1: ping writes a counter to one pipe and blocks reading the
// other; pong reads it, checks it and writes it back. Every round trip
// wakes each side once, so the kernel switches context on both CPUs.
type pingPong struct {
	toPong, toPing [2]int // [read, write] fds; -1 once closed
}

func newPingPong() (*pingPong, error) {
	var p pingPong
	if err := unix.Pipe2(p.toPong[:], unix.O_CLOEXEC); err != nil {
		return nil, fmt.Errorf("pipe2: %w", err)
	}
	if err := unix.Pipe2(p.toPing[:], unix.O_CLOEXEC); err != nil {
		unix.Close(p.toPong[0])
		unix.Close(p.toPong[1])
		return nil, fmt.Errorf("pipe2: %w", err)
	}
	return &p, nil
}

// close closes every fd still open.
func (p *pingPong) close() error {
	var errs []error
	for _, fd := range []*int{&p.toPong[0], &p.toPong[1], &p.toPing[0], &p.toPing[1]} {
		errs = append(errs, closeFd(fd))
	}
	return errors.Join(errs...)
}

func closeFd(fd *int) error {
	if *fd < 0 {
		return nil
	}
	err := unix.Close(*fd)
	*fd = -1
	return err
}

// yieldCheck is how many round trips ping and pong make between readings
// of the clock for their thread.Yielder, which keeps the Go runtime's
// monitor from taking their Ps while they block in read.
const yieldCheck = 16

// ping sends 0..n-1 and checks each echo. It closes its write end when it
// returns, so a pong still waiting sees EOF instead of hanging.
func (p *pingPong) ping(n int) (err error) {
	defer closeFd(&p.toPong[1])
	var y thread.Yielder
	defer func() { err = errors.Join(err, y.Err()) }()
	for i := range n {
		if i%yieldCheck == 0 {
			y.Tick(thread.Clock())
		}
		if err := put(p.toPong[1], uint32(i)); err != nil {
			return fmt.Errorf("ping %d: %w", i, err)
		}
		if err := expect(p.toPing[0], uint32(i)); err != nil {
			return fmt.Errorf("ping %d: %w", i, err)
		}
	}
	return nil
}

// pong echoes n counters, checking each is the next one.
func (p *pingPong) pong(n int) (err error) {
	defer closeFd(&p.toPing[1])
	var y thread.Yielder
	defer func() { err = errors.Join(err, y.Err()) }()
	for i := range n {
		if i%yieldCheck == 0 {
			y.Tick(thread.Clock())
		}
		if err := expect(p.toPong[0], uint32(i)); err != nil {
			return fmt.Errorf("pong %d: %w", i, err)
		}
		if err := put(p.toPing[1], uint32(i)); err != nil {
			return fmt.Errorf("pong %d: %w", i, err)
		}
	}
	return nil
}

func put(fd int, v uint32) error {
	var buf [4]byte
	binary.LittleEndian.PutUint32(buf[:], v)
	for {
		r, _, e := thread.Syscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return fmt.Errorf("write: %w", e)
		}
		n := int(r)
		if n != len(buf) {
			return fmt.Errorf("write: %d of %d bytes", n, len(buf))
		}
		return nil
	}
}

func expect(fd int, want uint32) error {
	var buf [4]byte
	for {
		r, _, e := thread.Syscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return fmt.Errorf("read: %w", e)
		}
		n := int(r)
		if n != len(buf) {
			return fmt.Errorf("read %d bytes, want %d (0 is the other side gone)", n, len(buf))
		}
		if got := binary.LittleEndian.Uint32(buf[:]); got != want {
			return fmt.Errorf("read counter %d, want %d", got, want)
		}
		return nil
	}
}

// runPingPong runs n round trips between ping, pinned to cpuA, and pong,
// pinned to cpuB: two child processes (internal/child), as UnixBench's
// context1 forks, or with shared two throw-away threads of this process.
// started is called once both sides are pinned, just before they begin (a
// benchmark resets its timer there), and stopped once both have done their
// round trips, before the processes or threads exit (it stops the timer
// there, so that exits are not timed). It returns the voluntary context
// switches the two sides' threads made during the round trips, or -1
// where the kernel's status file lacks the count; a status file that
// cannot be read or parsed is an error.
func runPingPong(cpuA, cpuB, n int, shared bool, started, stopped func()) (switches int, err error) {
	if shared {
		return runPingPongThreads(cpuA, cpuB, n, started, stopped)
	}
	return runPingPongProcs(cpuA, cpuB, n, started, stopped)
}

// ppArgs and ppResult are a side's arguments and counts in a child.
type (
	ppArgs   struct{ N int }
	ppResult struct{ Switches int }
)

// The roles: fd 4 is the side's read end, fd 5 its write end.
var (
	_ = child.Register("pingpong-ping", func(c *child.Ctx) error { return pingPongSide(c, true) })
	_ = child.Register("pingpong-pong", func(c *child.Ctx) error { return pingPongSide(c, false) })
)

func pingPongSide(c *child.Ctx, ping bool) error {
	var a ppArgs
	if err := c.Args(&a); err != nil {
		return err
	}
	p := &pingPong{toPong: [2]int{-1, -1}, toPing: [2]int{-1, -1}}
	work := p.pong
	if ping {
		p.toPing[0], p.toPong[1] = c.File(0), c.File(1)
		work = p.ping
	} else {
		p.toPong[0], p.toPing[1] = c.File(0), c.File(1)
	}
	defer p.close()
	if err := c.Ready(nil); err != nil {
		return err
	}
	sw, err := countSwitches(func() error { return work(a.N) })
	if err != nil {
		return err
	}
	return c.Result(ppResult{sw})
}

// checkPingPong checks the fds and tasks a PingPong row takes here: its
// two pipes and, in mm=separate, a child process per side, each
// inheriting two pipe ends (child.Fds(2, 2)), of child.Tasks() tasks
// (child.CheckTasks); in mm=shared two throw-away threads, each reading its
// /proc/thread-self/status (one fd each, maybe at once).
//
//	fds:   4 + child.Fds(2, 2) (separate), 4 + 2 (shared)
//	tasks: 2*child.Tasks() (separate), 2 (shared)
func checkPingPong(shared bool) error {
	fds, why := pingPongFds(shared)
	if shared {
		const what = "a ping-pong between two threads"
		if err := limits.Fds(what, fds, why); err != nil {
			return err
		}
		return limits.Tasks(what, 2, "2 threads")
	}
	const what = "a ping-pong between two child processes"
	if err := limits.Fds(what, fds, why); err != nil {
		return err
	}
	return child.CheckTasks(what, 2)
}

// pingPongFds is checkPingPong's count of fds, and how it is made up.
func pingPongFds(shared bool) (int, string) {
	if shared {
		return 4 + 2, "2 pipes + 2 status files"
	}
	return 4 + child.Fds(2, 2), fmt.Sprintf("2 pipes + 2 child processes x %d + %d while the second starts", child.ParentFds, child.StartFds(2))
}

func runPingPongProcs(cpuA, cpuB, n int, started, stopped func()) (int, error) {
	p, err := newPingPong()
	if err != nil {
		return 0, err
	}
	defer p.close()
	var g child.Group
	defer g.Close()
	if _, err := g.Start(child.Spec{Role: "pingpong-ping", Args: ppArgs{n}, Fds: []int{p.toPing[0], p.toPong[1]}, Pin: true, CPU: cpuA}); err != nil {
		return 0, err
	}
	if _, err := g.Start(child.Spec{Role: "pingpong-pong", Args: ppArgs{n}, Fds: []int{p.toPong[0], p.toPing[1]}, Pin: true, CPU: cpuB}); err != nil {
		return 0, err
	}
	// Only the children hold the pipes now, so one that ends gives the
	// other EOF.
	if err := p.close(); err != nil {
		return 0, err
	}
	if err := g.Ready(); err != nil {
		return 0, err
	}
	if started != nil {
		started()
	}
	if err := g.Go(); err != nil {
		return 0, err
	}
	res := make([]ppResult, 2)
	if err := g.Results(func(i int) any { return &res[i] }); err != nil {
		return 0, err
	}
	if stopped != nil {
		stopped()
	}
	if err := g.Wait(); err != nil {
		return 0, err
	}
	if res[0].Switches < 0 || res[1].Switches < 0 {
		return -1, nil
	}
	return res[0].Switches + res[1].Switches, nil
}

// runPingPongThreads is runPingPong on two throw-away threads of this
// process (mm=shared).
func runPingPongThreads(cpuA, cpuB, n int, started, stopped func()) (switches int, err error) {
	p, err := newPingPong()
	if err != nil {
		return 0, err
	}
	defer p.close()
	ready := make(chan struct{}, 2)
	begin := make(chan struct{})
	type end struct {
		switches int
		err      error
	}
	ends := make(chan end, 2)
	finished := make(chan struct{}, 2) // a side's work is over; its thread has yet to exit
	side := func(cpu int, work func(int) error, closeOnFail *int) {
		var sw int
		err := thread.Run(func() error {
			defer func() { finished <- struct{}{} }()
			if err := cpus.Pin(cpu); err != nil {
				closeFd(closeOnFail)
				ready <- struct{}{}
				return err
			}
			ready <- struct{}{}
			<-begin
			var err error
			sw, err = countSwitches(func() error { return work(n) })
			return err
		})
		ends <- end{sw, err}
	}
	go side(cpuA, p.ping, &p.toPong[1])
	go side(cpuB, p.pong, &p.toPing[1])
	<-ready
	<-ready
	if started != nil {
		started()
	}
	close(begin)
	<-finished
	<-finished
	if stopped != nil {
		stopped()
	}
	var errs []error
	for range 2 {
		e := <-ends
		errs = append(errs, e.err)
		if e.switches < 0 || switches < 0 {
			switches = -1
		} else {
			switches += e.switches
		}
	}
	return switches, errors.Join(errs...)
}

// countSwitches runs work and returns the voluntary context switches the
// calling thread made meanwhile: -1 where the kernel does not print the
// count (a visible degradation the benchmark notes), an error where the
// status file cannot be read or its count parsed. work runs even when the
// first reading fails, so that the other side is not left waiting.
func countSwitches(work func() error) (int, error) {
	before, berr := voluntarySwitches()
	err := work()
	after, aerr := voluntarySwitches()
	if err := errors.Join(err, berr, aerr); err != nil {
		return 0, err
	}
	if before < 0 || after < 0 {
		return -1, nil
	}
	return after - before, nil
}

// readStatus reads the calling thread's status file; tests substitute it.
var readStatus = procfs.ThreadSelf

// voluntarySwitches reads the calling thread's voluntary context switches:
// -1 where the kernel prints no such line (the check is then skipped, with
// a note), an error where the file cannot be read or the count parsed,
// which must fail the run rather than drop its only proof that the
// threads slept.
func voluntarySwitches() (int, error) {
	st, err := readStatus()
	if err != nil {
		return 0, fmt.Errorf("voluntary context switches: %w", err)
	}
	n, err := st.Int("voluntary_ctxt_switches")
	if errors.Is(err, procfs.ErrMissing) {
		return -1, nil
	}
	if err != nil {
		return 0, fmt.Errorf("voluntary context switches: %w", err)
	}
	return n, nil
}
