//go:build linux

package prctlbench

import (
	"errors"
	"fmt"
	"testing"

	"github.com/kbench/kbench/internal/cpus"
	"github.com/kbench/kbench/internal/limits"
	"github.com/kbench/kbench/internal/pulse"
	"github.com/kbench/kbench/internal/skip"
)

// onlineCPUs returns the online CPUs, which the rows pulse in turn,
// skipping when the affinity mask or cpuset leaves some of them out: a
// pulse pins its thread to each.
func onlineCPUs(b *testing.B) []int {
	online, err := cpus.Online()
	if err != nil {
		b.Fatalf("online CPUs: %v", err)
	}
	limits.NeedCPUs(b, "a pulse on every online CPU", len(online))
	return online
}

// mayPulse skips where mode cannot or must not run here.
func mayPulse(b *testing.B, mode pulse.Mode) {
	b.Helper()
	initial, err := pulse.Initial()
	err = protectBlocked(mode, initial, err, pulse.SpectreV2(), pulse.RequestedMode())
	if errors.Is(err, errProtectNotRequested) {
		skip.Now(b, err)
	}
	skip.IfNotSupported(b, err)
}

// errProtectNotRequested keeps protect pulses off a boot nobody gave them.
var errProtectNotRequested = errors.New("protect pulses change this boot's results until reboot (report 000), so they run only under KBENCH_PULSE=protect, on a boot given to the protect side")

// protectBlocked says why mode may not pulse here: an error wrapping
// skip.ErrNotSupported (the kernel) or errProtectNotRequested (the boot),
// or nil.
func protectBlocked(mode pulse.Mode, initial pulse.State, initialErr error, spectreV2 string, requested pulse.Mode) error {
	if initialErr != nil {
		return pulse.GetUnsupported(initialErr)
	}
	if mode != pulse.Protect {
		return nil
	}
	if err := pulse.CheckControl(initial, spectreV2); err != nil {
		return err
	}
	if requested != pulse.Protect {
		return fmt.Errorf("KBENCH_PULSE=%s: %w", orOff(requested), errProtectNotRequested)
	}
	return nil
}

func orOff(m pulse.Mode) string {
	if m == "" {
		return "off"
	}
	return string(m)
}

// checkContainedAfter checks, when the benchmark ends, that protection
// never leaked past the pulse threads.
func checkContainedAfter(b *testing.B) {
	b.Cleanup(func() {
		note, err := pulse.CheckContained()
		if err != nil {
			b.Errorf("after %s: %v", b.Name(), err)
		}
		if note != "" {
			b.Log(note)
		}
	})
}
