// Package kprofile samples kernel and user call chains with perf events
// and writes them as pprof profiles, so that `go tool pprof -diff_base`
// shows which kernel functions got hotter between two runs, as LKP's
// perf-profile section does between two kernels.
//
// A Sampler opens one sampling event per online CPU (cycles where the PMU
// offers it, else the cpu-clock software event), system-wide where the
// user may (root or CAP_PERFMON), else for the calling process's threads
// and the tasks they start. Start and Stop enable and disable it around a
// timed region; a goroutine drains the per-CPU ring buffers every 20 ms
// while it runs, and Profile reads the rest.
//
// Frames are named as perf report names them: kernel frames from
// /proc/kallsyms read at Profile time (module names kept, "func [mod]";
// JIT'd classic BPF such as seccomp filters has no kallsyms entry and
// shows as "[kernel text without a symbol]" under __seccomp_filter); this
// process's frames by the Go runtime, with inlined calls; other
// processes' frames from the files in their /proc/PID/maps, opened when
// the process first appears in the samples (.gopclntab for Go binaries,
// else .symtab or .dynsym; the vDSO from memory), else "[unknown]
// file+offset". Samples carry the labels pid, comm (the thread's), cpu
// and mode (kernel or user).
//
// Sampling slows the work it samples as perf record does (the timer
// interrupts on a VM without a PMU): docs/results.md has the figures.
package kprofile
