//go:build linux

// Package abmath is the A/B stack's statistics as pure numbers, as
// x/perf's benchmath is benchstat's: Welch's t-test and Student's t
// quantiles (welch.go), the Scale every test, interval and power figure
// of a row uses (scale.go), Benjamini and Hochberg's q-values (bh.go),
// the mde and boots needed of Welch's test and the U-test (power.go),
// the intervals of boot medians and Hodges-Lehmann's of a shift
// (interval.go), and Stein's two-stage rule of a planned run
// (stein.go). It returns numbers and writes no text; it knows no result
// file, row or report. abstat judges comparisons
// with it, abplan plans, abseries finds change points, profdelta tests
// profile shares. A new statistic (a sequential test, a change-point
// statistic) is a function of numbers here, beside its tests.
package abmath
