//go:build linux

// Package cpus discovers the CPUs a benchmark may use and pins the calling
// thread to one of them, verifying the pin as ibpb-pulse.c does: the
// affinity mask holds exactly that CPU and sched_getcpu reports it.
//
// Pin changes the calling thread's affinity for good, so it refuses the
// main thread; call it on a thread.Run thread, whose affinity dies with it.
package cpus

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// OnlinePath is where the kernel lists online CPUs.
const OnlinePath = "/sys/devices/system/cpu/online"

// Online returns the online CPUs, in order.
func Online() ([]int, error) {
	data, err := os.ReadFile(OnlinePath)
	if err != nil {
		return nil, err
	}
	return ParseList(strings.TrimSpace(string(data)))
}

// Usable returns the online CPUs that the process's affinity allows.
func Usable() ([]int, error) {
	online, err := Online()
	if err != nil {
		return nil, err
	}
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(os.Getpid(), &set); err != nil {
		return nil, fmt.Errorf("sched_getaffinity: %w", err)
	}
	var usable []int
	for _, c := range online {
		if set.IsSet(c) {
			usable = append(usable, c)
		}
	}
	return usable, nil
}

// MaxCPU bounds the CPU numbers ParseList accepts: above any kernel's
// NR_CPUS, so that a corrupt list cannot ask for a huge range.
const MaxCPU = 1 << 16

// ParseList parses the kernel's CPU list format, e.g. "0-3,8,10-11".
func ParseList(s string) ([]int, error) {
	var cpus []int
	if s == "" {
		return nil, fmt.Errorf("empty CPU list")
	}
	for part := range strings.SplitSeq(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("bad CPU list %q", s)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("bad CPU list %q", s)
			}
		}
		if b >= MaxCPU {
			return nil, fmt.Errorf("CPU list %q names CPU %d, past %d", s, b, MaxCPU-1)
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
		}
	}
	slices.Sort(cpus)
	return slices.Compact(cpus), nil
}

// Current returns the CPU the calling thread runs on (getcpu(2)).
func Current() (int, error) {
	var cpu uint32
	if _, _, e := unix.RawSyscall(unix.SYS_GETCPU, uintptr(unsafe.Pointer(&cpu)), 0, 0); e != 0 {
		return -1, fmt.Errorf("getcpu: %w", e)
	}
	return int(cpu), nil
}

// Pin binds the calling thread to cpu and verifies it: the affinity mask
// must hold exactly cpu, and the thread must be running there.
func Pin(cpu int) error {
	if unix.Gettid() == unix.Getpid() {
		return fmt.Errorf("cpus: refusing to pin the main thread, whose affinity would outlive the benchmark")
	}
	var set unix.CPUSet
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fmt.Errorf("sched_setaffinity(CPU %d): %w", cpu, err)
	}
	return Verify(cpu)
}

// Verify checks that the calling thread is pinned to cpu and runs there.
func Verify(cpu int) error {
	var got unix.CPUSet
	if err := unix.SchedGetaffinity(0, &got); err != nil {
		return fmt.Errorf("sched_getaffinity: %w", err)
	}
	if got.Count() != 1 || !got.IsSet(cpu) {
		return fmt.Errorf("affinity of thread %d is %s CPUs, want exactly CPU %d", unix.Gettid(), describe(&got), cpu)
	}
	now, err := Current()
	if err != nil {
		return err
	}
	if now != cpu {
		return fmt.Errorf("thread %d pinned to CPU %d runs on CPU %d", unix.Gettid(), cpu, now)
	}
	return nil
}

func describe(set *unix.CPUSet) string {
	var in []string
	for c := 0; c < len(set)*64; c++ {
		if set.IsSet(c) {
			in = append(in, strconv.Itoa(c))
		}
	}
	return fmt.Sprintf("%d (%s)", len(in), strings.Join(in, ","))
}
