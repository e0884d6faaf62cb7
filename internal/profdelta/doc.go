//go:build linux

// Package profdelta compares a row's kernel profiles across the boots of
// an A/B, as LKP's perf-profile section compares perf profiles across
// runs: per kernel function, self and with children, its cost per op
// and its share of the row's samples in each boot, each side's mean and
// sd, Welch's t over the boots and its Benjamini-Hochberg q, ordered by
// |t| of the per-op change (shares are compositional: docs/profiles.md
// says why). The profiles are kprofile's, a subdirectory per boot (Dir);
// a boot's -count runs of a row are pooled. The statistics return
// numbers; package abreport writes them.
package profdelta
