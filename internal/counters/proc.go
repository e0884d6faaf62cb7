//go:build linux

package counters

import (
	"fmt"
	"strings"

	"github.com/kbench/kbench/internal/procfs"
)

// procCount is one line of a /proc table summed over CPUs.
type procCount struct {
	unit  string // the per-op unit it reports
	total uint64
}

// softirqCounts takes /proc/softirqs' lines, one per softirq type with
// a count per possible CPU, and returns each type's sum over CPUs as
// softirq-<type>/op, in the file's order. Types are named by the kernel
// (BLOCK_IOPOLL before 4.5, IRQ_POLL since).
func softirqCounts(lines []procfs.CPUTableLine) []procCount {
	var out []procCount
	for _, l := range lines {
		out = append(out, procCount{unit: softirqUnit(l.Label), total: l.Sum})
	}
	return out
}

// softirqUnit names a softirq type's unit: NET_RX is softirq-net-rx/op.
func softirqUnit(name string) string {
	return "softirq-" + strings.ToLower(strings.ReplaceAll(name, "_", "-")) + "/op"
}

// ipiUnits maps the IPI lines of /proc/interrupts to units: x86 names them
// RES, CAL and TLB; other architectures number them (arm64's "IPI0:") and
// say what they are in the description, which is matched instead.
var ipiUnits = []struct{ label, desc, unit string }{
	{"RES", "Rescheduling interrupts", "ipi-res/op"},
	{"CAL", "Function call interrupts", "ipi-cal/op"},
	{"TLB", "TLB shootdowns", "ipi-tlb/op"},
}

// ipiCounts takes the rescheduling, function-call and TLB-shootdown IPI
// lines of /proc/interrupts, each summed over the online CPUs the header
// names, in ipiUnits' order. A kind the file lacks (arm64 has no TLB
// shootdown IPI) is left out.
func ipiCounts(lines []procfs.CPUTableLine) []procCount {
	found := map[string]uint64{}
	for _, l := range lines {
		for _, u := range ipiUnits {
			if l.Label == u.label || l.Desc == u.desc {
				found[u.unit] += l.Sum
			}
		}
	}
	var out []procCount
	for _, u := range ipiUnits {
		if v, ok := found[u.unit]; ok {
			out = append(out, procCount{unit: u.unit, total: v})
		}
	}
	return out
}

// delta subtracts two readings of the same file; a line that appeared or
// went away between them is an error (a CPU hotplug changes sums, not
// lines).
func delta(before, after []procCount) ([]procCount, error) {
	if len(before) != len(after) {
		return nil, fmt.Errorf("%d lines before, %d after", len(before), len(after))
	}
	out := make([]procCount, len(after))
	for i := range after {
		if before[i].unit != after[i].unit {
			return nil, fmt.Errorf("line %d was %s, now %s", i, before[i].unit, after[i].unit)
		}
		out[i] = procCount{unit: after[i].unit}
		if after[i].total >= before[i].total {
			out[i].total = after[i].total - before[i].total
		}
	}
	return out, nil
}
