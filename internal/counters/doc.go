//go:build linux

// Package counters measures, in every row's timed region (package
// region), the kernel work behind the headline number, as LKP puts
// perf-stat, /proc/interrupts and /proc/softirqs deltas beside each
// result: a reviewer who sees "TCP_CRR -11.6%" asks at once whether there
// are more context switches, more IPIs, more softirq work, more
// instructions, or the same instructions with more iTLB misses. The
// counters are evidence, not verdicts: kbcompare lists those that changed
// under their row and never lets them decide its exit status.
//
// The counters, per op (b.N, or the row's own op count):
//
//   - cpu-ns/op (task-clock): the CPU time of the test process and its
//     child processes (redis-server, the peer processes of the
//     mm=separate rows: a live child from its /proc totals, a reaped one
//     from RUSAGE_CHILDREN), whatever the scope below: a
//     system-wide task-clock would count every CPU's wall time, idle
//     included, as perf stat -a's "2.000 CPUs utilized" shows;
//   - cs/op, migrations/op, faults/op: context switches, CPU migrations
//     and page faults;
//   - cycles/op, instructions/op, branch-misses/op, cache-misses/op,
//     itlb-misses/op: PMU events, one group, scaled by time
//     enabled/running when the kernel multiplexed them; where there is no
//     PMU (most VMs), the fingerprint says so once and rows lack them;
//   - softirq-<type>/op: the delta of each line of /proc/softirqs summed
//     over CPUs (softirq-net-rx/op, softirq-timer/op, ...);
//   - ipi-res/op, ipi-cal/op, ipi-tlb/op: the rescheduling,
//     function-call and TLB-shootdown IPI lines of /proc/interrupts,
//     summed over CPUs.
//
// Scope: where this process may count whole CPUs (root, CAP_PERFMON, or
// kernel.perf_event_paranoid <= 0), everything but task-clock counts every
// task on every online CPU, as LKP's perf stat -a does, so that
// redis-server, the peer side of a socket and kernel threads count; so
// does every other process on the machine, which is why quiet machines
// matter for these too. Elsewhere the counters cover the test process's
// threads and its child processes, and cpu-migrations is skipped. The
// /proc tables are always system-wide. The fingerprint's counters.scope
// line says which.
//
// Cost: counting must not move the rows it describes (goal: below 1% of
// a row; the measurements are in results/2026-11-30-counters-cost.md). So the counters the
// kernel keeps anyway are read as running totals at the region's edges,
// with nothing in between: task-clock from CLOCK_PROCESS_CPUTIME_ID and
// the children's /proc/<tid>/schedstat; context switches and page faults
// from /proc/stat's ctxt and /proc/vmstat's pgfault (system-wide) or
// getrusage and the children's /proc files (process); softirqs and IPIs
// from /proc. perf_event_open counts only cpu-migrations (system-wide:
// its hook runs on migrations alone) and the PMU events. The perf
// software events were measured and left out: per-task task-clock events
// are switched out and in with their task at every context switch, which
// cost 11% of netbench TCPRR/flows=1, and the system-wide context-switch
// event, which runs on every switch, about 1.7% with page-faults and
// cpu-migrations. In process scope, PMU events are per task and pay that
// switching cost too. Each region also costs a fixed 10-100 us of CPU
// time at its edges (the testing package's ReadMemStats among it), which
// per-op values carry divided by the op count: nothing at -benchtime=1s,
// visible in -benchtime=100x smoke runs.
//
// KBENCH_COUNTERS picks the counters: on (the default), all, off, or a
// comma-separated list of names (task-clock, context-switches,
// cpu-migrations, page-faults, cycles, instructions, branch-misses,
// cache-misses, iTLB-load-misses, softirqs, ipis). A counter this machine
// cannot count is skipped with a note in the fingerprint
// (counters.skipped), never the row.
//
// The default is task-clock alone: the one counter kbcompare listed as
// the op's own change in the kernel A/Bs on record, read from clocks at
// the edges (no perf event, no /proc table), so that benchstat prints a
// package's own units and one counter table; `all` adds the event
// counters, which name a cause (results/2026-12-04-benchstat-view.md).
package counters
