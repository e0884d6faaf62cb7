//go:build linux

package kprofile

import (
	"errors"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/kbench/kbench/internal/skip"
	"golang.org/x/sys/unix"
)

// Each spin function marks a phase of TestSamplerWindows: what the
// profile may and may not hold.
//
//go:noinline
func spinBefore(d time.Duration) int { return spin(d) }

//go:noinline
func spinTimed(d time.Duration) int { return spin(d) }

//go:noinline
func spinPaused(d time.Duration) int { return spin(d) }

//go:noinline
func spinAfterReset(d time.Duration) int { return spin(d) }

// spin calls getpid until its thread has run for d of CPU time, so that
// the number of samples does not depend on the machine's other load.
func spin(d time.Duration) int {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	n := 0
	for end := threadCPU() + d; threadCPU() < end; {
		for range 100 {
			unix.Getpid()
			n++
		}
	}
	return n
}

func threadCPU() time.Duration {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	return time.Duration(ts.Nano())
}

func openSampler(t *testing.T, o Options) *Sampler {
	t.Helper()
	s, err := Open(o)
	if errors.Is(err, skip.ErrNotSupported) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func monotonic() uint64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return uint64(ts.Nano())
}

// samplesIn counts the samples with fn on their stack (inlined frames
// included); fn is a kernel name or a Go name without its import path's
// directories ("kprofile.spinTimed").
func samplesIn(p *profile.Profile, fn string) int64 {
	var n int64
	for _, s := range p.Sample {
		if onStack(s, fn) {
			n += s.Value[0]
		}
	}
	return n
}

func onStack(s *profile.Sample, fn string) bool {
	for _, l := range s.Location {
		for _, ln := range l.Line {
			if name := ln.Function.Name; name == fn || strings.HasSuffix(name, "/"+fn) {
				return true
			}
		}
	}
	return false
}

// TestSamplerWindows: the profile holds samples of the timed phases only:
// none from work before the first Start, between Stop and Start, or before
// a Reset; and every sample's time lies in a timed phase.
func TestSamplerWindows(t *testing.T) {
	s := openSampler(t, Options{Hz: 4000})
	const d = 150 * time.Millisecond
	spinBefore(d)
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	spinBefore(d) // discarded by the Reset below
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	s.Reset()
	spinBefore(d)
	w1 := monotonic()
	s.Start()
	fds := countFds(t)
	spinTimed(d)
	time.Sleep(3 * drainEvery) // the drainer runs, sees other tasks
	if n := countFds(t); n != fds {
		t.Errorf("%d fds open while sampling, %d when it started: the drainer must open none", n, fds)
	}
	s.Stop()
	spinPaused(d)
	s.Start()
	spinAfterReset(d)
	s.Stop()
	w4 := monotonic()
	n, first, last := s.Samples()
	p, err := s.Profile()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s, %s: %s", s.Event(), s.Scope(), p.Comments[1])
	if first < w1 || last > w4 || n == 0 {
		t.Errorf("%d samples from %d to %d, outside the timed phases %d..%d", n, first, last, w1, w4)
	}
	// 150 ms of CPU time at 4 kHz is 600 samples on a host, far fewer in
	// an emulated guest, whose timers fire at the pace emulation allows
	// (72 and 172 seen under TCG). Each timed spin is about half of the
	// timed CPU time of this process: ask for a quarter of this
	// process's samples (the scope may be system-wide), and at least 20.
	var own int64
	for _, smp := range p.Sample {
		if l := smp.Label["pid"]; len(l) == 1 && l[0] == strconv.Itoa(os.Getpid()) {
			own += smp.Value[0]
		}
	}
	timedMin := max(int64(20), own/4)
	for fn, min := range map[string]int64{"spinTimed": timedMin, "spinAfterReset": timedMin, "spinBefore": 0, "spinPaused": 0} {
		got := samplesIn(p, "kprofile."+fn)
		if min == 0 && got != 0 {
			t.Errorf("%s: %d samples; it ran outside the timed phases", fn, got)
		}
		if min > 0 && got < min {
			t.Errorf("%s: %d samples, want at least %d", fn, got, min)
		}
	}
	// The timed spins call getpid: kernel frames must be named.
	if got := samplesIn(p, "__x64_sys_getpid") + samplesIn(p, "__task_pid_nr_ns"); got == 0 && !strings.Contains(strings.Join(p.Comments, " "), "unnamed") {
		t.Errorf("no getpid kernel frames among %d samples", n)
	}
}

// TestSamplerProcessOnly: the fallback scope samples this process alone,
// threads started after Open included.
func TestSamplerProcessOnly(t *testing.T) {
	s := openSampler(t, Options{Hz: 4000, ProcessOnly: true})
	if s.Scope() != "process" {
		t.Fatalf("scope %q", s.Scope())
	}
	s.Start()
	done := make(chan struct{})
	go func() { // a goroutine on a new thread: inherited events see it
		defer close(done)
		runtime.LockOSThread()
		spinTimed(100 * time.Millisecond)
	}()
	<-done
	s.Stop()
	p, err := s.Profile()
	if err != nil {
		t.Fatal(err)
	}
	pid := strconv.Itoa(os.Getpid())
	for _, smp := range p.Sample {
		if got := smp.Label["pid"][0]; got != pid {
			t.Fatalf("process-only profile has a sample of pid %s (comm %v)", got, smp.Label["comm"])
		}
	}
	if n := samplesIn(p, "kprofile.spinTimed"); n < 100 {
		t.Errorf("spinTimed on a new thread: %d samples, want at least 100", n)
	}
}

func countFds(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}
