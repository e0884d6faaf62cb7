//go:build linux

// Package unit reports per-second metrics next to ns/op and declares, for
// every unit the suite reports, which direction is better, as benchfmt
// `Unit` metadata lines that benchstat carries and kbcompare reads.
package unit

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"testing"

	"golang.org/x/perf/benchunit"

	"github.com/kbench/kbench/internal/registry"
)

// Units lists every unit the suite reports but ns/op, with its direction:
// the benchmarks' own (internal/registry) and the kernel counters. A
// benchmark that reports a unit missing here fails, so no metric is
// printed without its direction.
var Units = registry.Units()

// Counters lists the units of the kernel counters every row reports per
// op (package counters). They are evidence beside the headline, not
// verdicts: kbcompare lists those that changed under their row and never
// lets them decide its exit status. They are part of Units too.
var Counters = map[string]registry.Better{
	"cpu-ns/op":        registry.Lower, // task-clock: CPU time of the test process and its children
	"cs/op":            registry.Lower, // context-switches
	"migrations/op":    registry.Lower, // cpu-migrations
	"faults/op":        registry.Lower, // page-faults
	"cycles/op":        registry.Lower, // PMU cycles
	"instructions/op":  registry.Lower, // PMU instructions retired
	"branch-misses/op": registry.Lower, // PMU branch mispredictions
	"cache-misses/op":  registry.Lower, // PMU last-level cache misses
	"itlb-misses/op":   registry.Lower, // PMU iTLB load misses (report 004's code-layout effect)
	// /proc/softirqs deltas per type, summed over CPUs (BLOCK_IOPOLL
	// before Linux 4.5, IRQ_POLL since).
	"softirq-hi/op":           registry.Lower,
	"softirq-timer/op":        registry.Lower,
	"softirq-net-tx/op":       registry.Lower,
	"softirq-net-rx/op":       registry.Lower,
	"softirq-block/op":        registry.Lower,
	"softirq-block-iopoll/op": registry.Lower,
	"softirq-irq-poll/op":     registry.Lower,
	"softirq-tasklet/op":      registry.Lower,
	"softirq-sched/op":        registry.Lower,
	"softirq-hrtimer/op":      registry.Lower,
	"softirq-rcu/op":          registry.Lower,
	// /proc/interrupts IPI deltas, summed over CPUs.
	"ipi-res/op": registry.Lower, // rescheduling IPIs
	"ipi-cal/op": registry.Lower, // function-call IPIs
	"ipi-tlb/op": registry.Lower, // TLB shootdowns
	// internal/peer's placement meter: the share of a two-sided row's
	// round trips in which both sides were last seen on one CPU. Higher
	// by convention (a shared CPU was the faster mode of the rows that
	// vary); it is evidence of where the scheduler put them.
	"same-cpu/op": registry.Higher,
}

func init() { maps.Copy(Units, Counters) }

// IsCounter reports whether unit is one of Counters, as written or as
// benchfmt tidies it when reading results (cpu-ns/op becomes cpu-sec/op).
func IsCounter(unit string) bool {
	if _, ok := Counters[unit]; ok {
		return true
	}
	for u := range Counters {
		if _, tidy := benchunit.Tidy(1, u); tidy == unit {
			return true
		}
	}
	return false
}

// Report records count events over the benchmark's timed section as a
// rate in unit (e.g. "loads/s").
func Report(b *testing.B, count int64, unit string) {
	b.Helper()
	if _, ok := Units[unit]; !ok {
		b.Fatalf("rate: unit %q has no entry in unit.Units: add it to the package's internal/registry entry", unit)
	}
	sec := b.Elapsed().Seconds()
	if sec <= 0 {
		b.Fatalf("rate: no timed section to divide %d %s by", count, unit)
	}
	b.ReportMetric(float64(count)/sec, unit)
}

// Metric records a value in a declared unit (a latency percentile, say).
func Metric(b *testing.B, v float64, unit string) {
	b.Helper()
	if _, ok := Units[unit]; !ok {
		b.Fatalf("rate: unit %q has no entry in unit.Units: add it to the package's internal/registry entry", unit)
	}
	b.ReportMetric(v, unit)
}

// WriteMetadata prints a `Unit <unit> better=<dir>` line per unit.
func WriteMetadata(w io.Writer) error {
	for _, u := range slices.Sorted(maps.Keys(Units)) {
		if _, err := fmt.Fprintf(w, "Unit %s better=%s\n", u, Units[u]); err != nil {
			return err
		}
	}
	return nil
}
