//go:build linux

// Package profdelta compares a row's kernel profiles across the boots of
// an A/B, as LKP's perf-profile section compares perf profiles across
// runs: for each kernel function, self (the innermost frame) and with
// children (anywhere on the stack, once a sample), its cost per op and
// its share of the row's samples in each boot, each side's mean and
// standard deviation, the change, Welch's t over the boots and its
// Benjamini-Hochberg q, ordered by |t| of the per-op change. Per op and
// not by share, because shares are compositional: one function that
// grows dilutes every other's share (docs/profiles.md says why and
// when); a profile without its op count (kprofile.OpsComment) is
// refused.
//
// The profiles are kprofile's (KBENCH_PROFILE), a subdirectory per boot
// (Dir); a boot's -count runs of a row are pooled, since they share its
// layout. Samples are weighed by the default sample type, as pprof
// weighs them, and only kernel frames name functions unless
// Options.AllFrames. The statistics return numbers; package abreport writes them.
package profdelta
