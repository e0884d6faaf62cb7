//go:build linux

package counters

import (
	"strings"

	"golang.org/x/sys/unix"
)

// kind says where a counter comes from.
type kind int

const (
	software  kind = iota // a perf software event, counted in the scope
	taskClock             // perf task-clock, always over the test process and its children
	hardware              // a PMU event, in one group, counted in the scope
	procFile              // deltas of a /proc file
)

// counter is one name KBENCH_COUNTERS accepts.
type counter struct {
	name string // perf's name, as KBENCH_COUNTERS and perf stat -e spell it
	unit string // the per-op unit it reports ("" for /proc counters, which report several)
	kind kind
	typ  uint32
	cfg  uint64
}

// hwCache is the config of a PERF_TYPE_HW_CACHE event.
func hwCache(cache, op, result uint64) uint64 { return cache | op<<8 | result<<16 }

// all lists every counter, in the order rows report them.
var all = []counter{
	{name: "task-clock", unit: "cpu-ns/op", kind: taskClock},
	{name: "context-switches", unit: "cs/op", kind: software, typ: unix.PERF_TYPE_SOFTWARE, cfg: unix.PERF_COUNT_SW_CONTEXT_SWITCHES},
	{name: "cpu-migrations", unit: "migrations/op", kind: software, typ: unix.PERF_TYPE_SOFTWARE, cfg: unix.PERF_COUNT_SW_CPU_MIGRATIONS},
	{name: "page-faults", unit: "faults/op", kind: software, typ: unix.PERF_TYPE_SOFTWARE, cfg: unix.PERF_COUNT_SW_PAGE_FAULTS},
	{name: "cycles", unit: "cycles/op", kind: hardware, typ: unix.PERF_TYPE_HARDWARE, cfg: unix.PERF_COUNT_HW_CPU_CYCLES},
	{name: "instructions", unit: "instructions/op", kind: hardware, typ: unix.PERF_TYPE_HARDWARE, cfg: unix.PERF_COUNT_HW_INSTRUCTIONS},
	{name: "branch-misses", unit: "branch-misses/op", kind: hardware, typ: unix.PERF_TYPE_HARDWARE, cfg: unix.PERF_COUNT_HW_BRANCH_MISSES},
	{name: "cache-misses", unit: "cache-misses/op", kind: hardware, typ: unix.PERF_TYPE_HARDWARE, cfg: unix.PERF_COUNT_HW_CACHE_MISSES},
	{name: "iTLB-load-misses", unit: "itlb-misses/op", kind: hardware, typ: unix.PERF_TYPE_HW_CACHE,
		cfg: hwCache(unix.PERF_COUNT_HW_CACHE_ITLB, unix.PERF_COUNT_HW_CACHE_OP_READ, unix.PERF_COUNT_HW_CACHE_RESULT_MISS)},
	{name: "softirqs", kind: procFile},
	{name: "ipis", kind: procFile},
}

func lookup(name string) (counter, bool) {
	for _, c := range all {
		if c.name == name {
			return c, true
		}
	}
	return counter{}, false
}

func (c counter) attr() unix.PerfEventAttr {
	return unix.PerfEventAttr{Type: c.typ, Config: c.cfg}
}

// ReportedUnits returns the units every row reports for the value of a
// result file's "counters" fingerprint line (the counted names, or
// "off (...)"): a unit, or for the /proc tables, which report a unit per
// line, a prefix ending in "-" ("softirq-", "ipi-").
func ReportedUnits(counted string) []string {
	var units []string
	for name := range strings.SplitSeq(counted, ",") {
		c, ok := lookup(strings.TrimSpace(name))
		switch {
		case !ok:
		case c.name == "softirqs":
			units = append(units, "softirq-")
		case c.name == "ipis":
			units = append(units, "ipi-")
		default:
			units = append(units, c.unit)
		}
	}
	return units
}
