//go:build linux

// Package seccompbench loads and runs seccomp filters as two kernel
// performance reports did.
//
// # Reports
//
// docs/reports.md links both reports and says what they found.
// Report 000 (lkp, "x86/bugs: Enable IBPB flush on BPF JIT allocation"):
// stress-ng's seccomp stressor lost 95.7% of its ops/s because every BPF
// JIT allocation that reuses a pack chunk flushes branch predictors on all
// CPUs (IPI + IBPB). Report 001 (UnixBench `syscall 10 m` on 5.7): 1, 4
// and 32 identical filters cost 19.8%, 33.0% and 78.3% of the syscall
// loop's rate.
//
// # BenchmarkLoad
//
// One op of shape=stress-ng is the work of one stress-ng bogo-op's child,
// on a fresh OS thread that exits at the end of the op (the op waits for
// its death, as stress-ng waits for its child): no_new_privs; the huge
// filters of `ret ALLOW`, searched as stress-ng searches them (32, 64 ...
// 4096 load; the 13 larger sizes it then tries are refused with EINVAL by
// seccomp(2) and by prctl(2)); no_new_privs again; the
// SECCOMP_GET_NOTIF_SIZES and SECCOMP_GET_ACTION_AVAIL probes (valid and
// invalid flags, for stress-ng's nine actions) and an invalid seccomp op;
// the small allow-list filter, 12 and 14 instructions in alternate ops as
// stress-ng's two variants are; open, write 5 bytes to, close /dev/null.
// That is 9 successful loads, each translated to eBPF and JIT-compiled,
// and freed when the thread dies. shape=single is one thread loading one
// small filter: the per-load cost. loaders=1 runs ops one after another,
// as many as b.Loop asks for, in one call per -count (so no trial's ops
// are thrown away); loaders=gomaxprocs runs one loader per GOMAXPROCS
// (b.RunParallel, once per trial b.N), as lkp runs stress-ng with
// nr_threads=100%. Reported: ns/op, ops/s and loads/s.
//
// With net.core.bpf_jit_harden=2 (or 1, for a loader without CAP_BPF,
// such as an unprivileged run) the kernel blinds the JIT's constants:
// bpf_jit_blind_constants rewrites each instruction that holds an
// immediate into three, one bpf_patch_insn_single at a time, and each
// patch walks the whole program to fix its jumps (bpf_adj_branches) and
// may reallocate it. stress-ng's huge filters are nothing but constants
// (8160 `ret ALLOW` an op, in filters of 32 to 4096), so an op's cost
// grows with the square of the largest filter, in the loading thread
// (state R, not exiting): in a Linux 6.1 guest under QEMU's TCG one
// loaders=1 op took about 19 times as long as with hardening off, about
// two thirds of it in bpf_adj_branches and most of the rest in vmalloc
// for the patched copies (ftrace; results/2026-12-01-seccomp-load-harden.md). That is the kernel's
// work and what the rows measure; a thread's death, which frees its
// filters, is waited for however long it takes (package internal/thread).
//
// How it differs from stress-ng:
//   - A thread, not a process: the Go runtime creates it with clone
//     (CLONE_THREAD, from its template thread) and it leaves with exit(2),
//     where stress-ng forks, exits and is reaped with waitpid. The filter
//     work, which is what the reports measure, is the same.
//   - stress-ng's small filter allows six calls and traps the rest, and in
//     half of its ops traps write(2), killing the child through SIGSYS. A
//     trap would kill a Go thread mid-runtime, so ours allows by default
//     and denies, with EPERM, seven calls neither Go nor the op makes; it
//     has the same 12 or 14 instructions. write always succeeds.
//   - Left out: the random 64-instruction filter that stress-ng tries in
//     about half its ops (refused with EINVAL nearly always, but one that
//     validated would kill the thread with SECCOMP_RET_KILL), and the
//     SECCOMP_SET_MODE_STRICT calls of one op in 16 (refused once filters
//     are loaded; strict mode would kill the whole Go process). Both are
//     failing syscalls that never reach the BPF JIT.
//   - /dev/null is opened with O_CLOEXEC.
//
// # BenchmarkSyscall
//
// UnixBench's syscall loop (package internal/unixbench) on one
// throw-away thread carrying N identical filters, N from KBENCH_FILTERS
// (default 0, 1, 4, 32). One op is one loop: work=mix is UnixBench's mode
// m, close(dup(fd)) on a pipe, getpid, getuid, umask (5 calls);
// work=getpid is one getpid, as the kernel's seccomp_benchmark selftest
// measures. Filters are built with go-seccomp-bpf: check arch, refuse x32,
// deny getppid with errno i (filter i), allow the rest. kind=cached
// filters read only nr and arch, so from Linux 5.11 the kernel answers
// from its per-task action cache without running them and the cost is
// flat in N; kind=full filters also load args[0] first, so every filter
// runs on every call, as all filters did on report 001's 5.7 kernel, and
// the cost grows with N. On kernels before 5.11 both kinds run every
// filter. Reported: ns/op and loops/s.
//
// The thread loads its filters once per -count and runs as many loops as
// b.Loop asks for (-benchtime's worth, all of them timed), rather than
// once for every trial b.N go test tries.
//
// How it differs from UnixBench: it runs -benchtime's worth of loops
// rather than for 10 seconds; umask is called with the process's current mask rather than
// 022, so the test binary's umask never changes; the calls go through
// RawSyscall, as a C program's through libc.
//
// # BenchmarkBystander
//
// What loading costs the other CPUs (report 000's flush reaches every
// CPU; its maintainers proposed limiting the IPIs to CPUs that ran the
// program). A victim pinned to one CPU (KBENCH_VICTIM_CPU, default the
// first usable CPU) runs the syscall mix; with loaders=stress-ng every
// other usable CPU, up to GOMAXPROCS-1 of them, runs stress-ng ops in a
// loop, each op on a fresh thread pinned there; with loaders=idle they do
// nothing. One op is one victim loop, as many as b.Loop asks for, so the
// loaders start once per -count; compare the rows. Every loader must
// complete an op before the victim starts and another after it ends.
// victim-preempt/s counts the victim's involuntary context switches: the
// Go runtime creates each loader thread from its template thread, which
// the kernel may run on the victim's CPU before the new thread pins
// itself, so a slowdown that comes with preemptions is CPU sharing, not
// interrupts. Skipped on machines with one usable CPU or GOMAXPROCS 1.
//
// # Self-checks
//
// Every load's result is checked, and so is every probe call's answer
// against what the same calls answered on a fresh thread before the run
// (no filters, no no_new_privs). At the first and the last op of each
// run, /proc/thread-self/status must show Seccomp: 2 and exactly the
// filters loaded (plus any a fresh thread starts with, inside a
// container); BenchmarkLoad's loaders=1 rows, whose b.Loop does not say
// in advance which op is the last, check the first op and one more op
// after the run, untimed and not counted. BenchmarkSyscall checks the count before and after its
// loop, and that getppid fails with errno N, which proves filter N is on
// the thread. After each benchmark the main thread and a fresh thread
// must show the seccomp state and no_new_privs bit they started with.
// Kernels before 5.9 print no Seccomp_filters line: then the count is
// checked through the loads' results and Seccomp: 2 only, with a note.
package seccompbench
