//go:build linux

package pulse

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kbench/kbench/internal/cpus"
	"github.com/kbench/kbench/internal/fingerprint"
	"github.com/kbench/kbench/internal/options"
	"github.com/kbench/kbench/internal/procfs"
)

// Requested is KBENCH_PULSE: the sweep benchmain runs before the first test
// or benchmark of a binary ("off", "sham" or "protect"). It also unlocks
// prctlbench's protect rows, which contaminate the rest of the boot.
var Requested = options.Enum("KBENCH_PULSE", "off", []string{"off", string(Sham), string(Protect)},
	"every test binary: one `PR_SPEC_INDIRECT_BRANCH` pulse per online CPU before its first test or benchmark, recorded in the fingerprint (`pulse.*`); `protect` also unlocks `prctlbench`'s protect rows. A protect sweep changes results until reboot: [pulses.md](pulses.md)")

// RequestedMode returns KBENCH_PULSE's mode, or "" when it is off.
func RequestedMode() Mode {
	if *Requested == string(Sham) || *Requested == string(Protect) {
		return Mode(*Requested)
	}
	return ""
}

// RunRequested runs the KBENCH_PULSE sweep over every online CPU, checks
// that protection stayed on the pulse threads, and returns the fingerprint
// fields recording it. It does nothing when KBENCH_PULSE is off. An error
// means the requested sweep could not be done, and the run should stop.
func RunRequested() ([]fingerprint.Field, error) {
	mode := RequestedMode()
	if mode == "" {
		return nil, nil
	}
	online, err := cpus.Online()
	if err != nil {
		return nil, fmt.Errorf("KBENCH_PULSE=%s: listing online CPUs: %w", mode, err)
	}
	at := time.Now()
	results, err := Sweep(online, mode)
	took := time.Since(at)
	if err != nil {
		return nil, fmt.Errorf("KBENCH_PULSE=%s: the sweep stopped after %d of %d CPUs: %w", mode, len(results), len(online), err)
	}
	note, err := CheckContained()
	if err != nil {
		return nil, fmt.Errorf("KBENCH_PULSE=%s: after the sweep: %w", mode, err)
	}
	if note == "" {
		note = "main thread and a new thread read " + initial.String() + ", as at start"
	}
	// The boot id names this boot: two result files with the same one
	// shared whatever a protect sweep left behind.
	bootID, err := procfs.Host.BootID()
	if err != nil {
		bootID = "(unreadable: " + err.Error() + ")"
	}
	return []fingerprint.Field{
		{Key: "pulse.mode", Value: string(mode)},
		{Key: "pulse.at", Value: at.UTC().Format(time.RFC3339)},
		{Key: "pulse.took", Value: took.Round(time.Microsecond).String()},
		{Key: "pulse.cpus", Value: fingerprint.FormatCPUList(online)},
		{Key: "pulse.states", Value: SummarizeStates(results)},
		{Key: "pulse.contained", Value: note},
		{Key: "pulse.boot_id", Value: bootID},
	}, nil
}

// SummarizeStates groups results by their before and after states:
// "prctl|enable -> prctl|force-disable (CPUs 0-19)".
func SummarizeStates(results []Result) string {
	type change struct{ before, after State }
	var order []change
	byChange := map[change][]int{}
	for _, r := range results {
		c := change{r.Before, r.After}
		if _, seen := byChange[c]; !seen {
			order = append(order, c)
		}
		byChange[c] = append(byChange[c], r.CPU)
	}
	var parts []string
	for _, c := range order {
		list := byChange[c]
		slices.Sort(list)
		parts = append(parts, fmt.Sprintf("%s -> %s (CPUs %s)", c.before, c.after, fingerprint.FormatCPUList(list)))
	}
	if len(parts) == 0 {
		return "(no pulses)"
	}
	return strings.Join(parts, ", ")
}
