//go:build linux

// Package abreport writes an A/B comparison (package abstat's Report)
// for people: the full text report (every row, 100 columns, for an
// e-mail), the brief form (what changed, 80 columns and one screen, for
// a review thread) and markdown (for a forge), and in each of them the
// perf-profile section of package profdelta's deltas (profile.go).
// kbcompare prints them and kbab prints the text report at the end of
// its boots.
package abreport
