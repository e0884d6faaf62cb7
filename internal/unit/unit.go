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
)

// Better is a unit's good direction.
type Better string

const (
	Higher Better = "higher"
	Lower  Better = "lower"
)

// Units lists every custom unit of the suite. A benchmark that reports a
// unit missing here fails, so no metric is printed without its direction.
var Units = map[string]Better{
	"ops/s":        Higher, // reference tool's bogo-ops per second
	"loads/s":      Higher, // successful seccomp filter loads per second
	"loops/s":      Higher, // UnixBench syscall loops per second
	"loader-ops/s": Higher, // the loaders' ops per second beside a victim
	// how often a pinned victim lost its CPU to another task, per second
	"victim-preempt/s": Lower,
	"pulses/s":         Higher, // PR_SPEC_INDIRECT_BRANCH pulses per second (prctlbench)
	"roundtrips/s":     Higher, // pipe ping-pong round trips per second (prctlbench)
	"fds/s":            Higher, // fds passed in SCM_RIGHTS messages per second
	"req/s":            Higher, // Redis requests per second (redis-benchmark's rps)
	"p50-us/batch":     Lower,  // median round trip of one pipeline of requests, microseconds
	"p99-us/batch":     Lower,  // 99th percentile round trip of one pipeline, microseconds
	"server-us/req":    Lower,  // redis-server CPU time per request (schedstat, else utime+stime), microseconds
	"tps":              Higher, // netbench: transactions per second, all flows (lkp Throughput_total_tps)
	"tps/flow":         Higher, // netbench: transactions per second per flow (lkp Throughput_tps)
	"p50-us":           Lower,  // netbench: median transaction latency, microseconds
	"p99-us":           Lower,  // netbench: 99th percentile transaction latency, microseconds
	"slow/op":          Lower,  // netbench: share of transactions slower than 200 ms
}

// Counters lists the units of the kernel counters every row reports per
// op (package counters). They are evidence beside the headline, not
// verdicts: kbcompare lists those that changed under their row and never
// lets them decide its exit status. They are part of Units too.
var Counters = map[string]Better{
	"cpu-ns/op":        Lower, // task-clock: CPU time of the test process and its children
	"cs/op":            Lower, // context-switches
	"migrations/op":    Lower, // cpu-migrations
	"faults/op":        Lower, // page-faults
	"cycles/op":        Lower, // PMU cycles
	"instructions/op":  Lower, // PMU instructions retired
	"branch-misses/op": Lower, // PMU branch mispredictions
	"cache-misses/op":  Lower, // PMU last-level cache misses
	"itlb-misses/op":   Lower, // PMU iTLB load misses (report 004's code-layout effect)
	// /proc/softirqs deltas per type, summed over CPUs (BLOCK_IOPOLL
	// before Linux 4.5, IRQ_POLL since).
	"softirq-hi/op":           Lower,
	"softirq-timer/op":        Lower,
	"softirq-net-tx/op":       Lower,
	"softirq-net-rx/op":       Lower,
	"softirq-block/op":        Lower,
	"softirq-block-iopoll/op": Lower,
	"softirq-irq-poll/op":     Lower,
	"softirq-tasklet/op":      Lower,
	"softirq-sched/op":        Lower,
	"softirq-hrtimer/op":      Lower,
	"softirq-rcu/op":          Lower,
	// /proc/interrupts IPI deltas, summed over CPUs.
	"ipi-res/op": Lower, // rescheduling IPIs
	"ipi-cal/op": Lower, // function-call IPIs
	"ipi-tlb/op": Lower, // TLB shootdowns
	// internal/peer's placement meter: the share of a two-sided row's
	// round trips in which both sides were last seen on one CPU. Higher
	// by convention (a shared CPU was the faster mode of the rows that
	// vary); it is evidence of where the scheduler put them.
	"same-cpu/op": Higher,
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
		b.Fatalf("rate: unit %q has no entry in unit.Units", unit)
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
		b.Fatalf("rate: unit %q has no entry in unit.Units", unit)
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
