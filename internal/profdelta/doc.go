//go:build linux

// Package profdelta compares a row's kernel profiles across the boots of
// an A/B, as LKP's perf-profile section compares perf profiles across
// runs: for each kernel function its share of the row's samples in each
// boot, self (the innermost frame: LKP's self-cycles-pp) and with
// children (anywhere on the stack, once a sample: LKP's children
// cycles-pp), each side's mean share and the standard deviation of the
// per-boot shares, the change (new minus old) and Welch's t of it over
// the per-boot shares, the functions ordered by |t|, the change against
// its own noise between boots.
//
// The profiles are kprofile's (KBENCH_PROFILE), read back from a
// directory with a subdirectory per boot (Dir); a boot's -count runs of a
// row are pooled, since the runs of one boot share its layout and are no
// independent samples of the kernel's. Samples are weighed by the
// profile's default sample type (cpu nanoseconds for cpu-clock, the
// cycles for cycles), as pprof weighs them, so that a share agrees with
// `go tool pprof -top`'s flat% and cum%. Only kernel frames (JIT'd BPF
// included) name functions unless Options.AllFrames; a share is of all of
// the row's samples, user time and other processes included, as LKP's
// system-wide perf record.
//
// DiffProfile makes the pprof profile of the difference (the new side's
// boots against the old side's, pprof -diff_base's form), and FlameGraph
// draws it with pprof's own web UI, as a differential flame graph in one
// HTML file. The statistics return numbers; package abreport writes them.
package profdelta
