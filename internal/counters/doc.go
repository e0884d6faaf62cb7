// Package counters measures, in every row's timed region (package
// region), the kernel work behind the headline number, as LKP puts
// perf-stat, /proc/interrupts and /proc/softirqs deltas beside each
// result: a reviewer who sees "TCP_CRR -11.6%" asks at once whether there
// are more context switches, more IPIs, more softirq work, more
// instructions, or the same instructions with more iTLB misses. The
// counters are evidence, not verdicts: kbcompare lists those that changed
// under their row and never lets them decide its exit status.
//
// Each row reports, per op (b.N, or the row's own op count):
//
//   - cpu-ns/op (task-clock): the CPU time of the test process and its
//     child processes (redis-server), whatever the scope below (a
//     system-wide task-clock counts every CPU's wall time, idle included,
//     as perf stat -a's "2.000 CPUs utilized" shows). It is read from
//     CLOCK_PROCESS_CPUTIME_ID and the children's /proc/<tid>/schedstat
//     at the region's edges, not from perf task-clock events: per-task
//     perf events are switched out and in with their task at every
//     context switch, which cost 11% of netbench TCPRR/flows=1
//     (docs/results.md);
//   - cs/op, migrations/op, faults/op: perf software events
//     context-switches, cpu-migrations, page-faults;
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
// kernel.perf_event_paranoid <= 0), perf events other than task-clock
// count every task on every online CPU, as LKP's perf stat -a does, so
// that redis-server, the peer side of a socket and kernel threads count;
// so does every other process on the machine, which is why quiet machines
// matter for these too. Elsewhere they count the test process's threads
// and its children (see perfevent.OpenSet), and where
// kernel.perf_event_paranoid forbids counting the kernel, user space only.
// The /proc deltas are always system-wide. The fingerprint's
// counters.scope line says which.
//
// KBENCH_COUNTERS picks the counters: on (the default), off, or a
// comma-separated list of names (task-clock, context-switches,
// cpu-migrations, page-faults, cycles, instructions, branch-misses,
// cache-misses, iTLB-load-misses, softirqs, ipis). A counter this machine
// cannot count is skipped with a note in the fingerprint
// (counters.skipped), never the row.
package counters
