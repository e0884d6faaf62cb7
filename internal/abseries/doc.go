//go:build linux

// Package abseries holds the statistics of a series of kernels, numbers
// only (the report's forms are abreport's, the runs kbab's): change
// points over a row's boot medians by kernel (Detect: binary
// segmentation, a seeded permutation test and an offset test that
// allows each kernel's own offset, the rows one Benjamini-Hochberg
// family) and a noise-aware bisection over the images between a good
// and a bad kernel (Search). docs/comparing.md, "The change points" and
// "Bisection over images", states the rules, their reasons and what the
// simulations show.
package abseries
