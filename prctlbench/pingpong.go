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
	"github.com/kbench/kbench/internal/peer"
	"github.com/kbench/kbench/internal/procfs"
	"github.com/kbench/kbench/internal/region"
	"github.com/kbench/kbench/internal/thread"
)

// pingPong is UnixBench's context1's two pipes: ping writes a counter to
// one and blocks reading the other; pong reads it, checks it and writes it
// back. Every round trip wakes each side once, so the kernel switches
// context on both CPUs.
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
	return errors.Join(p.closeWriters(), closeFd(&p.toPong[0]), closeFd(&p.toPing[0]))
}

// closeWriters closes the write ends, so that a side blocked in a read
// sees EOF.
func (p *pingPong) closeWriters() error {
	return errors.Join(closeFd(&p.toPong[1]), closeFd(&p.toPing[1]))
}

func closeFd(fd *int) error {
	if *fd < 0 {
		return nil
	}
	err := unix.Close(*fd)
	*fd = -1
	return err
}

// The sides share a memfd holding a budget for each: a side takes its
// round's counters 0..N-1 from its own budget, pingPongChunk at a time
// (peer.Taker), and its thread's Yielder ticks at each take, which keeps
// the Go runtime's monitor from taking its P while it blocks in read. A
// chunk of round trips is some tens of microseconds, well under
// thread.YieldEvery.
//
// The placement meter of the pair (peer.Meter) follows the budgets, and
// each side looks at each take.
const (
	pingBudget    = 0
	pongBudget    = 64 // a cache line away from ping's
	pingPongMeter = 128
	pingPongMem   = pingPongMeter // what the sides map themselves
	pingPongChunk = 16
)

// ppArgs is a side's arguments, ppRound its round's and ppResult its
// counts: the voluntary context switches its thread made in the round's
// round trips, -1 where the kernel's status file lacks the count.
//
// MoveTo, a test hook, is CPU+1 that pong moves its thread to once set
// up, leaving its pin.
type (
	ppArgs   struct{ Budget, MoveTo int }
	ppRound  struct{ N int }
	ppResult struct{ Switches int }
)

// The sides' bodies, the same as child processes (mm=separate) and as
// threads (mm=shared). A side's files: 0 its read end, 1 its write end,
// 2 the memfd with the budgets.
var (
	pingRole = peer.Register("pingpong-ping", func(l peer.Link) error { return pingPongSide(l, ping) })
	pongRole = peer.Register("pingpong-pong", func(l peer.Link) error { return pingPongSide(l, pong) })
)

// ping sends counter i and checks its echo.
func ping(rd, wr int, i uint32) error {
	if err := put(wr, i); err != nil {
		return fmt.Errorf("ping %d: %w", i, err)
	}
	if err := expect(rd, i); err != nil {
		return fmt.Errorf("ping %d: %w", i, err)
	}
	return nil
}

// pong checks that the counter it reads is i, the next one, and echoes it.
func pong(rd, wr int, i uint32) error {
	if err := expect(rd, i); err != nil {
		return fmt.Errorf("pong %d: %w", i, err)
	}
	if err := put(wr, i); err != nil {
		return fmt.Errorf("pong %d: %w", i, err)
	}
	return nil
}

// pingPongSide runs one side's rounds: each is the round's N round trips,
// step(counter) each, counting the thread's voluntary context switches.
func pingPongSide(l peer.Link, step func(rd, wr int, i uint32) error) error {
	var a ppArgs
	if err := l.Args(&a); err != nil {
		return err
	}
	rd, wr := l.File(0), l.File(1)
	m, err := peer.MapMem(l.File(2), pingPongMem)
	if err != nil {
		return err
	}
	defer m.Close()
	budget := peer.NewBudget(m, a.Budget)
	t := peer.NewTaker(budget, pingPongChunk).Looking(l)
	if a.MoveTo > 0 {
		if err := cpus.Pin(a.MoveTo - 1); err != nil {
			return err
		}
	}
	for {
		var r ppRound
		ok, err := l.Next(&r)
		if !ok || err != nil {
			return err
		}
		budget.Reset(int64(r.N))
		if err := l.Ready(nil); err != nil {
			return err
		}
		// The first reading is after the go, inside the timed round (one
		// status file read a round): taken before Ready, it would count
		// the side's own wait for the go.
		sw, err := countSwitches(func() error {
			for i, ok := t.Next(); ok; i, ok = t.Next() {
				if err := step(rd, wr, uint32(i)); err != nil {
					return err
				}
			}
			return t.Err()
		})
		if err != nil {
			return err
		}
		if err := l.Result(ppResult{sw}); err != nil {
			return err
		}
	}
}

func put(fd int, v uint32) error {
	var buf [4]byte
	binary.LittleEndian.PutUint32(buf[:], v)
	for {
		r, _, e := thread.Syscall6(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), 0, 0, 0)
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
		r, _, e := thread.Syscall6(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), 0, 0, 0)
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

// pingPongSides is a row's started ping and pong and what the parent
// holds for them.
type pingPongSides struct {
	run    *peer.Group
	shared bool
	// held and mem are the pipes and the memfd with the budgets while
	// threads use them (mm=shared); in mm=separate the children hold
	// their own copies and the parent closes its own once they are
	// started.
	held  *pingPong
	mem   *peer.Mem
	meter *peer.Meter
	seen  peer.Reading // the meter's reading of the last round
}

// startPingPong starts ping, pinned to cpuA, and pong, pinned to cpuB (a
// negative CPU: not pinned): two child processes (internal/child), as
// UnixBench's context1 forks, or with shared two throw-away threads of
// this process. They wait for rounds.
func startPingPong(cpuA, cpuB int, shared bool) (*pingPongSides, error) {
	return startMoving(cpuA, cpuB, shared, 0)
}

// startMoving is startPingPong with pong moving to CPU moveTo-1 once set
// up, when moveTo > 0 (a test hook).
func startMoving(cpuA, cpuB int, shared bool, moveTo int) (*pingPongSides, error) {
	p, err := newPingPong()
	if err != nil {
		return nil, err
	}
	mem, err := peer.NewMem("kbench-pingpong", pingPongMeter+peer.MeterSize(1))
	if err != nil {
		p.close()
		return nil, err
	}
	meter, err := peer.NewMeter(mem, pingPongMeter, 1, "ping-pong", "ping", "pong")
	if err != nil {
		return nil, errors.Join(err, p.close(), mem.Close())
	}
	ends := []peer.Side{
		{Role: pingRole, Args: ppArgs{Budget: pingBudget}, Fds: []int{p.toPing[0], p.toPong[1], mem.Fd()}, Pin: cpuA >= 0, CPU: cpuA, Thread: shared, Watch: meter.Watch(0, 0)},
		{Role: pongRole, Args: ppArgs{pongBudget, moveTo}, Fds: []int{p.toPong[0], p.toPing[1], mem.Fd()}, Pin: cpuB >= 0, CPU: cpuB, Thread: shared, Watch: meter.Watch(0, 1)},
	}
	run, err := peer.Start(ends)
	if err != nil {
		return nil, errors.Join(err, p.close(), meter.Close(), mem.Close())
	}
	s := &pingPongSides{run: run, shared: shared, held: p, mem: mem, meter: meter}
	run.Defer(func(error) error { return errors.Join(s.release(), meter.Close()) })
	if !shared {
		// Only the children hold the pipes now, so one that ends gives
		// the other EOF.
		if err := s.release(); err != nil {
			return nil, errors.Join(err, run.Close())
		}
	}
	return s, nil
}

// round runs n round trips on the sides, timed by t, and returns the
// voluntary context switches the two sides' threads made in them, or -1
// where the kernel's status file lacks the count; a status file that
// cannot be read or parsed is an error, and so is a pinned side the
// meter saw off its CPU (s.seen holds the meter's reading). A failed
// round ends the sides.
func (s *pingPongSides) round(n int, t region.Timer) (int, error) {
	res := make([]ppResult, 2)
	err := s.run.Round(func(int) any { return ppRound{n} }, t, func(i int) any { return &res[i] })
	if err != nil {
		if s.shared {
			// The side that failed has returned; the other may be
			// blocked reading what the failed one would have written
			// next, which ends only at EOF. The failed side writes no
			// more, and the other is not about to write (the one
			// counter in flight is with the failed side, or was read
			// by it), so closing the write ends is safe.
			s.held.closeWriters()
		}
		return 0, err
	}
	if s.seen, err = s.meter.Read(); err != nil {
		return 0, err
	}
	if res[0].Switches < 0 || res[1].Switches < 0 {
		return -1, nil
	}
	return res[0].Switches + res[1].Switches, nil
}

// close ends the sides, reaps them and closes what the parent holds.
func (s *pingPongSides) close() error { return s.run.Close() }

// release closes the pipes and the memfd the parent holds: in
// mm=separate right after the start, else once the sides have ended
// (Run.Defer, which then unmaps the meter, whose mapping outlives the
// memfd).
func (s *pingPongSides) release() error {
	var errs []error
	if s.held != nil {
		errs = append(errs, s.held.close())
		s.held = nil
	}
	if s.mem != nil {
		errs = append(errs, s.mem.Close())
		s.mem = nil
	}
	return errors.Join(errs...)
}

// getPingPong returns a PingPong row's sides, kept across the calls of
// the row's function (peer.Kept): it starts them when none are kept (the
// first call, or the one after a failed round) or cpuA and
// cpuB changed, checking the fds and tasks the sides take just before
// it starts them, with the row's instruments open.
func getPingPong(row *peer.Kept[*pingPongSides], cpuA, cpuB int, shared bool) (*pingPongSides, error) {
	return row.Get(fmt.Sprint(cpuA, cpuB, shared), func() (*pingPongSides, *peer.Group, error) {
		if err := checkPingPong(shared); err != nil {
			return nil, nil, err
		}
		s, err := startPingPong(cpuA, cpuB, shared)
		if err != nil {
			return nil, nil, err
		}
		return s, s.run, nil
	})
}

// checkPingPong checks the fds and tasks a PingPong row's sides take here
// while they start: its two pipes and memfd and, in mm=separate, a child
// process per side, each inheriting two pipe ends and the memfd
// (child.Fds(2, 3)), of child.Tasks() tasks (child.CheckTasks); in
// mm=shared two throw-away threads, each reading its
// /proc/thread-self/status (one fd each, maybe at once). The parent keeps
// fewer once the sides are started (mm=separate: child.ParentFds each) or
// as many (mm=shared), so later rounds need no check.
//
//	fds:   5 + child.Fds(2, 3) (separate), 5 + 2 (shared)
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
		return 5 + 2, "2 pipes + a memfd + 2 status files"
	}
	return 5 + child.Fds(2, 3), fmt.Sprintf("2 pipes + a memfd + 2 child processes x %d + %d while the second starts", child.ParentFds, child.StartFds(3))
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
