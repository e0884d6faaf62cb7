//go:build linux

// Package prctlbench reproduces the second half of report 000
// (docs/reports.md): short-lived helpers, one per CPU, opt in to
// indirect-branch protection with
// prctl(PR_SET_SPECULATION_CTRL, PR_SPEC_INDIRECT_BRANCH,
// PR_SPEC_FORCE_DISABLE) and exit, after which Redis ZPOPMIN ran 11-13%
// slower for the rest of the boot, with more mispredicted returns in
// kernel code; sham helpers, which do all but the set, left it unchanged.
// Unlike ibpb-pulse.c, a sham pulse does not require the control
// (prctl|enable), so the sham rows run where the protect rows skip.
//
// BenchmarkPulse measures one pulse (package pulse, which does what the
// report's ibpb-pulse.c does): a throw-away thread pins itself to CPU k and
// checks it runs there, reads PR_GET_SPECULATION_CTRL, sets
// PR_SPEC_FORCE_DISABLE in protect mode, reads again and checks the state,
// and exits; CPUs are taken round robin. BenchmarkSweep is one pulse on
// every online CPU, as the report's shell loop ran. Both report ns/op and
// pulses/s. Protect rows skip, naming the decoded state and the spectre_v2
// line, where the kernel offers no per-task control; where it does, they
// run only under KBENCH_PULSE=protect, because their after-effect lasts
// until reboot.
//
// The probes are what the report's mechanism (kernel return prediction
// after an IBPB) would slow, measured after a KBENCH_PULSE sweep:
// BenchmarkSyscallMix is one loop of UnixBench's syscall mix
// (close(dup(fd)), getpid, getuid, umask: internal/unixbench), and
// BenchmarkPingPong is one round trip of a counter over two pipes between
// two sides (UnixBench's context1, two context switches per round trip,
// like Redis's event loop waking on its socket), placed as its cpu= key
// says (internal/peer's Placement): cpu=any unpinned, as context1 runs;
// cpu=same both on the first CPU of the ring, where every round trip is
// two switches on one CPU, each between two mms in mm=separate (the
// switch_mm that report 000's IBPB rides on); cpu=cross ping on the first
// and pong on the second (the fingerprint's cpu.cross line), where every
// wakeup crosses CPUs. cpu=cross is the row this package ran before the
// key existed (PingPong/mm=separate then); cpu=any's samples are those of
// whichever of the two the scheduler chose (same-cpu/op, the share of
// round trips in which both sides were last seen on one CPU, says which:
// each side reads its CPU at most once a millisecond, between takes of 16
// round trips, peer.Meter),
// and a pinned row fails when a side was seen off its CPU.
// mm=separate (the default shape) runs the sides as two child processes
// (internal/child), as context1 forks, so every wakeup switches to another
// mm; mm=shared runs them as two threads of the test binary, whose
// switches keep the mm. The difference isolates switch_mm on this kernel
// and CPU: the CR3/PCID switch, the conditional IBPB on a switch to
// another mm (cond_mitigation, what PR_SPEC_FORCE_DISABLE arms),
// mm_cpumask updates and per-mm TLB work. The sides are one body per
// role in both shapes (internal/peer) and live for the row: its first
// round starts them, after checking the fds and tasks they take, and
// each -count runs timed rounds of round trips on them (internal/rounds),
// so a round pays no fork, exec or thread start. Pong checks that each counter is the next one
// and ping that each echo is the counter it sent. Each side counts its
// thread's voluntary context switches (/proc/thread-self/status) in the
// round: a round trip on blocking pipes sleeps at least one of the two
// (both, in the steady state), so fewer switches between them than round
// trips, less the round's first, which both sides start at once, fails
// the row; a kernel without the line is noted in the log, and a status
// file that cannot be read fails the row.
// After every benchmark the main thread and a new thread must still read
// the process's initial state.
//
// Differences from the report: a pulse is a thread of the test binary, not
// a process, and runs as whatever user runs the test (ibpb-pulse.c refuses
// root). The kernel keys the barrier on the task, not the process or user:
// PR_SPEC_FORCE_DISABLE on the current task issues an IBPB at once
// ("x86/bugs: Flush IBP in ib_prctl_set()", Linux 6.2 and stable), and the
// task's flag makes the next switch to another mm issue one. The report
// used 20 CPUs and a per-boot A/B with Redis; docs/pulses.md gives the
// procedure for the probes and redisbench.
package prctlbench
