//go:build linux

// Package kprofile samples kernel and user call chains with perf events
// and writes them as pprof profiles, so that `go tool pprof -diff_base`
// shows which kernel functions got hotter between two runs, as LKP's
// perf-profile section does between two kernels.
//
// A Sampler opens one sampling event per online CPU (cycles where the PMU
// offers it, else the cpu-clock software event), system-wide where the
// user may (root or CAP_PERFMON), else for the calling process and its
// children. Start and Stop enable and disable it around a
// timed region; a goroutine drains the per-CPU ring buffers every 20 ms
// while it runs (copying samples, opening no file), and Stop reads the
// rest.
//
// Frames are named as perf report names them: kernel frames from
// /proc/kallsyms read at Profile time (module names kept, "func [mod]";
// JIT'd classic BPF such as seccomp filters has no kallsyms entry and
// shows as "[JIT'd BPF, no kallsyms symbol]"); this
// process's frames by the Go runtime, with inlined calls; other
// processes' frames from the files in their /proc/PID/maps, read when the
// region stops (.gopclntab for Go binaries, else .symtab or .dynsym; the
// vDSO from memory), else "[unknown] file+offset" (a task that exited
// before then keeps its addresses, and "pid N" as its comm). Samples
// carry the labels pid, comm (the thread's), cpu and mode (kernel or
// user).
//
// Sampling slows the work it samples as perf record does (the timer
// interrupts on a VM without a PMU): results/2026-11-30-kernel-profiles.md has the figures.
package kprofile
