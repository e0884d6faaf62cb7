//go:build linux

// Package abseries holds the statistics of a series of kernels: change
// points over a row's boot medians by kernel (Detect) and a noise-aware
// bisection over the images between a good and a bad kernel (Search). Numbers only: the
// report's forms are package abreport's (series.go), the runs kbab's.
//
// # Change points
//
// A row's input is its boot medians by kernel, on the row's scale as
// package abstat uses it (abmath.ScaleOf: logs where every median is
// positive, so a ratio is a shift). Binary segmentation over the kernel
// boundaries: the statistic at a split is the two-sample t (pooled
// variance) of the boots before against the boots after, the largest
// over the splits; its p the larger of a permutation test's (boots
// exchanged across the kernels, seeded, Besag and Clifford's sequential
// p) and an offset test's at the chosen split (offsetP: each kernel's
// own offset, a build's layout, allowed for). Rows are one family
// (Benjamini-Hochberg q); a changed row's segments are tested the same
// way at the level that admitted it. MinP is the permutation's floor,
// MDEShift the mde (the simulations size boots with BootsFor,
// design_test.go). docs/comparing.md, "The change
// points", states the rule, its reasons and what the simulations show.
//
// # Bisection
//
// Search is a bisection over images between a good and a bad kernel of
// one row, each step's image booted in rounds beside good and bad and
// judged by t tests of contrasts of the three means at looks sized from
// the confirmation, separate builds' own offsets allowed for as the
// series allows for them (Search says the rule; docs/comparing.md,
// "Bisection over images", the promise and what the simulations show).
package abseries
