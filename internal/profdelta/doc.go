//go:build linux

// Package profdelta compares a row's kernel profiles across the boots of
// an A/B, as LKP's perf-profile section compares perf profiles across
// runs: for each kernel function, self (the innermost frame: LKP's
// self-cycles-pp) and with children (anywhere on the stack, once a
// sample: LKP's children cycles-pp), its cost per op and its share of
// the row's samples in each boot, each side's mean and the standard
// deviation of the per-boot values, the change (new minus old), Welch's
// t of it over the boots and its Benjamini-Hochberg q, the functions
// ordered by |t| of the per-op change: the change against its own noise
// between boots.
//
// Why per op, and not by share as LKP orders. Shares are compositional:
// they add up to 100% of the row's samples, so a change of one part
// moves every other. When one function grows to take most of the samples
// (constant blinding's 85% of a seccomp filter load under
// bpf_jit_harden=2), every other function's share falls to a fraction of
// what it was, in every boot alike, whatever its own cost did; those
// falls are as steady as the functions' own costs, while the grown
// function's share spreads with how much of the op it took in each boot,
// so by the share's t the diluted functions come first and the cause
// trails (results/2026-12-04-profile-ab-tcg.md). What a kernel engineer
// asks of an A/B is which function costs more per op: a function's
// samples' value (cpu nanoseconds for cpu-clock, the period times the
// samples; cycles for cycles) over the ops the profiled runs covered
// does not move when another function grows, so a diluted function
// shows as unchanged and the grown one leads. Each profile carries its
// run's op count (kprofile.OpsComment, b.N); where every profile of a
// row carries it the lists are ordered per op (Delta.By ByPerOp), and the
// shares stay beside it, LKP's form. Profiles without it (written before
// kprofile recorded it, or another tool's) fall back to the shares
// (ByShare), and a report says which it used.
//
// The profiles are kprofile's (KBENCH_PROFILE), read back from a
// directory with a subdirectory per boot (Dir); a boot's -count runs of a
// row are pooled (their values and their ops summed), since the runs of
// one boot share its layout and are no independent samples of the
// kernel's. Samples are weighed by the profile's default sample type, as
// pprof weighs them, so that a share agrees with `go tool pprof -top`'s
// flat% and cum%. Only kernel frames (JIT'd BPF included) name functions
// unless Options.AllFrames; a share is of all of the row's samples, and
// a cost per op of all of the sampled CPUs' time, user time and other
// processes included, as LKP's system-wide perf record.
//
// DiffProfile makes the pprof profile of the difference (the new side's
// boots against the old side's, pprof -diff_base's form), and FlameGraph
// draws it with pprof's own web UI, as a differential flame graph in one
// HTML file. The statistics return numbers; package abreport writes them.
package profdelta
