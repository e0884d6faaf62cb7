//go:build linux

package child

import (
	"fmt"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// hold stops the child's runtime monitor thread (thread.Monitor) in a
// ptrace stop from its first ready to its end (reap), where the kernel
// may allow it (ptrace of a child; Yama's scope 0-2, no seccomp refusal).
//
// A solo child's monitor has no work (raw calls, no garbage collection,
// its loop yields by itself) but never parks, as the loop holds the only
// P: in SCHED_IDLE it still wakes every 10 ms. Each wakeup queues a task
// on a CPU the loops share, after which the kernel's balancer moves loops
// between the CPUs, splitting a TCP_CRR flow's client and server, whose
// every wakeup then crosses CPUs with an IPI: per transaction, 10 times
// the cross-CPU wakeups and 5 times the migrations of sixteen netperfs
// (results/2026-12-05-floor-4.md). A held thread neither wakes nor runs.
//
// The ptrace calls are made on the spawner thread (spawn), the tracer of
// every held thread, which lives as long as the test binary: if that
// ends, the kernel releases the threads with it.
func (p *Proc) hold(mon int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if mon <= 0 || p.holding != nil || p.waited {
		return
	}
	done := make(chan struct{})
	p.holding = done
	go func() {
		defer close(done)
		// Only asleep in nanosleep does the monitor hold none of the
		// runtime's locks: stopped anywhere else it may leave the loop's
		// thread waiting on one. It sleeps 10 ms at a time and runs for
		// microseconds, once the loop runs (before, it may be parked).
		syscall := fmt.Sprintf("/proc/%d/task/%d/syscall", p.Pid, mon)
		asleep := func() bool {
			b, err := os.ReadFile(syscall)
			return err == nil && strings.HasPrefix(string(b), fmt.Sprintf("%d ", unix.SYS_NANOSLEEP))
		}
		for wait := time.Millisecond; wait < 10*time.Second && !p.unhold.Load(); wait += wait / 4 {
			if !asleep() {
				time.Sleep(min(wait, 50*time.Millisecond))
				continue
			}
			held, gone := false, false
			spawn(func() {
				if unix.PtraceSeize(mon) != nil {
					gone = true // refused: the monitor stays in SCHED_IDLE
					return
				}
				var ws unix.WaitStatus
				if unix.PtraceInterrupt(mon) != nil {
					unix.PtraceDetach(mon)
					gone = true
					return
				}
				if _, err := unix.Wait4(mon, &ws, unix.WALL, nil); err != nil || !ws.Stopped() {
					gone = true // it ended meanwhile (reaped by that wait)
					return
				}
				if held = asleep(); !held {
					unix.PtraceDetach(mon)
				}
			})
			if held {
				p.mon = mon
			}
			if held || gone {
				return
			}
		}
	}()
}

// release lets the held monitor go before the child is reaped (p.mu
// held): detached, it runs again; if its process was killed, it is a
// zombie that only its tracer may reap, and its process cannot be reaped
// before it is.
func (p *Proc) release() {
	if p.holding == nil {
		return
	}
	p.unhold.Store(true)
	<-p.holding
	if p.mon == 0 {
		return
	}
	mon := p.mon
	p.mon = 0
	spawn(func() {
		if unix.PtraceDetach(mon) != nil {
			var ws unix.WaitStatus
			unix.Wait4(mon, &ws, unix.WALL, nil)
		}
	})
}
