//go:build linux

// Package thread runs functions on throw-away OS threads: fresh threads,
// locked to their goroutine, that the Go runtime destroys when the function
// returns. Per-thread kernel state that cannot be undone (seccomp filters,
// no_new_privs, speculation controls, CPU affinity) set on such a thread
// dies with it.
//
// Importing the package locks the main goroutine to the main thread from
// init on. Without that, a doomed goroutine could land on thread 0, which
// the runtime never destroys, and its state would stay for the rest of the
// run; Run also refuses, with ErrMainThread, should it ever find itself
// there.
//
// The package also holds what the benchmarks' blocking loops need from
// the runtime: the Yielder, a cheap monotonic Clock, and the solo mode of
// a child process (Solo), in which the loop's blocking calls (Syscall6)
// are raw.
package thread

import (
	"errors"
	"os"
	"runtime"
	"sync"

	"golang.org/x/sys/unix"
)

func init() {
	// The main goroutine keeps the main thread; no other goroutine runs on it.
	runtime.LockOSThread()
}

// ErrMainThread is returned when a throw-away function would run on the
// process's main thread, which is never destroyed.
var ErrMainThread = errors.New("thread: refusing to run on the main thread (gettid == getpid), which is never destroyed")

// ErrGoexit is returned when the function ended its goroutine with
// runtime.Goexit instead of returning: t.Fatal, t.Skip, b.Fatal or b.Skip
// called inside a Run closure do that (and belong on the test's own
// goroutine).
var ErrGoexit = errors.New("thread: the function called runtime.Goexit (t.Fatal, t.Skip, b.Fatal or b.Skip inside a thread.Run closure?) instead of returning")

// Run calls fn on a fresh locked OS thread, waits until the thread has
// exited, and returns fn's error. The thread is gone when Run returns, so
// the wait is part of the caller's cost, as waitpid is for a forked child.
// The wait has no time limit, since a slow kernel is what the suite
// measures (see waitExit): a thread that takes long to die is reported on
// stderr (SlowExit) and waited for; Run fails only when the thread is not
// dying at all.
//
// The thread gets an rseq area where the C library has not registered one
// (see Rseq), as glibc gives every thread of the reference tools.
func Run(fn func() error) error { return run(true, fn) }

func run(withRseq bool, fn func() error) error {
	type result struct {
		tid  int
		err  error
		rseq *rseqArea // written by the kernel until the thread is gone
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		// No UnlockOSThread: the goroutine exits locked, so the runtime
		// terminates the thread instead of reusing it.
		r := result{unix.Gettid(), ErrGoexit, nil}
		// Sent from a defer, so that a function that calls runtime.Goexit
		// (which runs deferred calls only) does not leave Run waiting.
		defer func() { done <- r }()
		r.err = runLocked(func() error {
			if solo {
				// A thread the monitor cloned inherits its SCHED_IDLE
				// (idleMonitor): the loop's goes back to the normal
				// policy, where the kernel lets it (leaving SCHED_IDLE
				// needs RLIMIT_NICE or CAP_SYS_NICE; speed, not work).
				if a, err := unix.SchedGetAttr(0, 0); err == nil && a.Policy == unix.SCHED_IDLE {
					_ = unix.SchedSetAttr(0, &unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_NORMAL}, 0)
				}
			}
			if withRseq {
				var err error
				if r.rseq, err = registerRseq(); err != nil {
					return err
				}
			}
			return fn()
		})
	}()
	r := <-done
	if errors.Is(r.err, ErrMainThread) {
		return r.err
	}
	err := waitExit(r.tid)
	runtime.KeepAlive(r.rseq)
	if err != nil {
		return errors.Join(r.err, err)
	}
	return r.err
}

// runThreads holds the tids of the threads running a Run function: the
// threads that die when it ends (see UnshareFiles).
var runThreads sync.Map

// runLocked runs fn on the calling, locked thread unless it is the main one.
func runLocked(fn func() error) error {
	tid := unix.Gettid()
	if tid == unix.Getpid() {
		return ErrMainThread
	}
	runThreads.Store(tid, true)
	defer runThreads.Delete(tid)
	return fn()
}

// onRunThread reports whether the caller runs a Run function on its
// throw-away thread. A Run thread runs nothing but its locked goroutine
// (in a solo process, where the Yielder releases the lock for a yield,
// no other goroutine is runnable; see Solo), so the tid alone says so.
func onRunThread() bool {
	_, ok := runThreads.Load(unix.Gettid())
	return ok
}

// Alive reports whether thread tid of this process still exists.
func Alive(tid int) bool {
	return unix.Tgkill(os.Getpid(), tid, 0) == nil
}
