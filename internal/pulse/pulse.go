//go:build linux

// Package pulse does what ibpb-pulse.c, attached to report 000, does: on a
// throw-away thread pinned to one CPU it reads the indirect-branch
// speculation state and, in protect mode, opts that thread in to
// protection with prctl(PR_SET_SPECULATION_CTRL, PR_SPEC_INDIRECT_BRANCH,
// PR_SPEC_FORCE_DISABLE); then the thread exits. The report saw Redis slow
// down for the rest of the boot after one such pulse per CPU, and not after
// sham pulses, which do everything but the set. One difference from
// ibpb-pulse.c, which exits in both modes unless the state is
// prctl|enable: a sham pulse does not require the control, so the sham
// rows run on machines where protect must skip.
//
// A pulse never enables speculation, writes an MSR or changes a system
// setting: the only write is the opt-in, on a thread that dies at once.
// The KBENCH_PULSE sweep (Requested, RunRequested) lets any test binary
// start from a pulsed machine.
package pulse

import (
	"errors"
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"

	"github.com/kbench/kbench/internal/cpus"
	"github.com/kbench/kbench/internal/skip"
	"github.com/kbench/kbench/internal/thread"
)

// Mode is sham or protect.
type Mode string

const (
	Sham    Mode = "sham"    // pin, read, read again: no set
	Protect Mode = "protect" // pin, read, set PR_SPEC_FORCE_DISABLE, read again
)

// Modes lists the modes in the order benchmarks run them.
var Modes = []Mode{Sham, Protect}

// Result is one pulse: the CPU and the states read before and after.
type Result struct {
	CPU           int
	Mode          Mode
	Before, After State
}

func (r Result) String() string {
	return fmt.Sprintf("CPU %d %s: %s -> %s", r.CPU, r.Mode, r.Before, r.After)
}

// initial is the main thread's state, read in init, before any pulse: the
// state every fresh thread of the process must keep reading.
var initial State
var initialErr error

func init() { initial, initialErr = linux{}.get() }

// Initial returns the process's state as the main thread read it at start,
// or the error PR_GET_SPECULATION_CTRL gave.
func Initial() (State, error) { return initial, initialErr }

// kernel is what a pulse asks of the kernel; tests substitute scripted
// answers to reach the states this machine does not have.
type kernel interface {
	pin(cpu int) error
	verify(cpu int) error
	get() (State, error)
	forceDisable() error
	spectreV2() string
}

// Pulse runs one pulse on cpu on a throw-away thread and returns once that
// thread has exited. An error wrapping skip.ErrNotSupported means the
// kernel or machine cannot do it; any other error is a failed check.
func Pulse(cpu int, mode Mode) (Result, error) {
	var r Result
	err := thread.Run(func() error {
		var err error
		r, err = pulseOn(linux{}, cpu, mode, initial, initialErr)
		return err
	})
	if err == nil && mode == Protect {
		markProtect() // the boot is contaminated from here on
	}
	return r, err
}

// Sweep pulses each CPU in turn, as the report's shell loop ran
// ibpb-pulse.c once per CPU, and stops at the first failure.
func Sweep(cpuList []int, mode Mode) ([]Result, error) {
	results := make([]Result, 0, len(cpuList))
	for _, cpu := range cpuList {
		r, err := Pulse(cpu, mode)
		if err != nil {
			return results, err
		}
		results = append(results, r)
	}
	return results, nil
}

// pulseOn is ibpb-pulse.c's main after argument parsing, with its checks.
func pulseOn(k kernel, cpu int, mode Mode, initial State, initialErr error) (Result, error) {
	r := Result{CPU: cpu, Mode: mode}
	if mode != Sham && mode != Protect {
		return r, fmt.Errorf("pulse: unknown mode %q", mode)
	}
	if initialErr != nil {
		return r, GetUnsupported(initialErr)
	}
	if err := k.pin(cpu); err != nil {
		if errors.Is(err, unix.EINVAL) {
			return r, &skip.Unsupported{
				Feature: fmt.Sprintf("pinning a pulse to online CPU %d", cpu),
				Err:     err,
				Hint:    "the CPU is outside this process's cpuset; run outside the container or cgroup that hides it",
			}
		}
		return r, fmt.Errorf("pulse on CPU %d: %w", cpu, err)
	}
	before, err := k.get()
	if err != nil {
		return r, GetUnsupported(err)
	}
	r.Before = before
	if before != initial {
		return r, fmt.Errorf("pulse on CPU %d: a fresh thread reads %s, the main thread started with %s: protection leaked past a throw-away thread",
			cpu, before.Describe(), initial.Describe())
	}
	want := before
	if mode == Protect {
		if err := CheckControl(before, k.spectreV2()); err != nil {
			return r, err
		}
		if err := k.forceDisable(); err != nil {
			if errors.Is(err, unix.EPERM) || errors.Is(err, unix.ENXIO) {
				return r, &skip.Unsupported{
					Feature: ControlFeature,
					Err:     fmt.Errorf("PR_SET_SPECULATION_CTRL(PR_SPEC_FORCE_DISABLE) on CPU %d in state %s: %s; spectre_v2: %s", cpu, before.Describe(), skip.Errno(err), k.spectreV2()),
					Hint:    spectreHint,
				}
			}
			return r, fmt.Errorf("pulse on CPU %d: PR_SET_SPECULATION_CTRL(PR_SPEC_FORCE_DISABLE) in state %s: %s", cpu, before.Describe(), skip.Errno(err))
		}
		want = Protected
	}
	after, err := k.get()
	if err != nil {
		return r, fmt.Errorf("pulse on CPU %d: second PR_GET_SPECULATION_CTRL: %s", cpu, skip.Errno(err))
	}
	r.After = after
	if after != want {
		return r, fmt.Errorf("pulse on CPU %d, mode %s: state went from %s to %s, want %s", cpu, mode, before.Describe(), after.Describe(), want.Describe())
	}
	if err := k.verify(cpu); err != nil {
		return r, fmt.Errorf("pulse on CPU %d left its CPU: %w", cpu, err)
	}
	return r, nil
}

// GetUnsupported explains a failing PR_GET_SPECULATION_CTRL for
// PR_SPEC_INDIRECT_BRANCH. x86 has it since Linux 4.20 (prctl(2); commit
// 9137bb27e60e, "x86/speculation: Add prctl() control for indirect branch
// speculation"), so there Since says so and the kernel matrix fails the
// skip on 4.20 or later; other architectures answer EINVAL or ENODEV in
// every release, and their skip has no Since.
func GetUnsupported(err error) error {
	u := &skip.Unsupported{Feature: "PR_GET_SPECULATION_CTRL(PR_SPEC_INDIRECT_BRANCH)", Err: err}
	if runtime.GOARCH == "amd64" || runtime.GOARCH == "386" {
		u.Since = skip.Version{Major: 4, Minor: 20}
		u.Hint = "boot a newer kernel"
	} else {
		u.Hint = "the control is x86's: other architectures answer EINVAL or ENODEV"
	}
	return u
}

// linux is the running kernel.
type linux struct{}

func (linux) pin(cpu int) error    { return cpus.Pin(cpu) }
func (linux) verify(cpu int) error { return cpus.Verify(cpu) }
func (linux) spectreV2() string    { return SpectreV2() }

func (linux) get() (State, error) {
	r, _, e := unix.RawSyscall6(unix.SYS_PRCTL, unix.PR_GET_SPECULATION_CTRL, unix.PR_SPEC_INDIRECT_BRANCH, 0, 0, 0, 0)
	if e != 0 {
		return 0, e
	}
	return State(r), nil
}

// forceDisable opts the calling thread in to protection for the rest of
// its life. It refuses the main thread, which never dies.
func (linux) forceDisable() error {
	if unix.Gettid() == unix.Getpid() {
		return thread.ErrMainThread
	}
	_, _, e := unix.RawSyscall6(unix.SYS_PRCTL, unix.PR_SET_SPECULATION_CTRL, unix.PR_SPEC_INDIRECT_BRANCH, unix.PR_SPEC_FORCE_DISABLE, 0, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}
