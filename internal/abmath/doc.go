//go:build linux

// Package abmath is the A/B stack's statistics as pure numbers, as
// x/perf's benchmath is benchstat's: tests, quantiles, intervals, power
// and Stein's rule, each file one of them. It knows no result file, row
// or report and writes no text; abstat, abplan, abseries and profdelta
// use it. A new statistic is a function of numbers here, beside its
// tests.
package abmath
