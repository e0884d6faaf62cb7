//go:build linux

package kprofile

import (
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/perfevent"
	"github.com/kbench/kbench/internal/skip"
	"golang.org/x/sys/unix"
)

// TestRefusalExplainedOnce plays a machine that refuses every
// perf_event_open (EACCES, as kernel.perf_event_paranoid=3 does without
// CAP_PERFMON): Open's error is a skip, as perfevent makes it, wraps
// fs.ErrPermission, says what kprofile was doing, and carries
// perfevent's explanation of the setting once, though both the
// system-wide and the per-process attempt were refused.
func TestRefusalExplainedOnce(t *testing.T) {
	defer func(o func(string, *unix.PerfEventAttr, int, int, *perfevent.Event) (*perfevent.Event, error)) {
		openEvent = o
	}(openEvent)
	var opened []string
	openEvent = func(name string, attr *unix.PerfEventAttr, pid, cpu int, _ *perfevent.Event) (*perfevent.Event, error) {
		opened = append(opened, name)
		return nil, perfevent.OpenError(name, attr, pid, cpu, unix.EACCES)
	}
	s, err := Open(Options{Hz: 4000})
	if err == nil {
		s.Close()
		t.Fatal("opened with every perf_event_open refused")
	}
	msg := err.Error()
	if !errors.Is(err, skip.ErrNotSupported) || !errors.Is(err, fs.ErrPermission) {
		t.Errorf("%v: want a skip (skip.ErrNotSupported) wrapping fs.ErrPermission", err)
	}
	for _, want := range []string{"kernel sampling of this process", "system-wide sampling before it: EACCES", "perf_event_open(cycles"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q lacks %q", msg, want)
		}
	}
	if n := strings.Count(msg, refusalHint(t)); n != 1 {
		t.Errorf("%q carries perfevent's explanation %d times, want once", msg, n)
	}
	// A refusal is not a missing PMU: cpu-clock is not tried after it.
	for _, name := range opened {
		if name != "cycles" {
			t.Errorf("opened %s after cycles was refused", name)
		}
	}
}

// TestMissingPMUFallsBack: where the PMU lacks cycles (ENOENT), the
// sampler takes cpu-clock; a refusal of that is explained once too.
func TestMissingPMUFallsBack(t *testing.T) {
	defer func(o func(string, *unix.PerfEventAttr, int, int, *perfevent.Event) (*perfevent.Event, error)) {
		openEvent = o
	}(openEvent)
	openEvent = func(name string, attr *unix.PerfEventAttr, pid, cpu int, _ *perfevent.Event) (*perfevent.Event, error) {
		errno := unix.EACCES
		if name == "cycles" {
			errno = unix.ENOENT
		}
		return nil, perfevent.OpenError(name, attr, pid, cpu, errno)
	}
	_, err := Open(Options{Hz: 4000, ProcessOnly: true})
	if err == nil || !strings.Contains(err.Error(), "perf_event_open(cpu-clock") || strings.Count(err.Error(), refusalHint(t)) != 1 {
		t.Errorf("cycles missing, cpu-clock refused: %v", err)
	}
}

// refusalHint is perfevent's explanation of a refusal on this machine.
func refusalHint(t *testing.T) string {
	var u *skip.Unsupported
	if err := perfevent.OpenError("x", &unix.PerfEventAttr{}, 0, -1, unix.EACCES); !errors.As(err, &u) || u.Hint == "" {
		t.Fatalf("perfevent's refusal %v has no hint", err)
	}
	return u.Hint
}
