//go:build linux

// Package abmath is the A/B stack's statistics as pure numbers, as
// x/perf's benchmath is benchstat's: tests, quantiles, intervals, power
// and Stein's rule. It knows no result file, row or report and writes
// no text.
package abmath
