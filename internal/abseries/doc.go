//go:build linux

// Package abseries holds the statistics of a series of kernels: change
// points over a row's boot medians by kernel (Detect), the boots per
// kernel a series needs (BootsFor), and a noise-aware bisection over the
// images between a good and a bad kernel (Search). Numbers only: the
// report's forms are package abreport's (series.go), the runs kbab's.
//
// # Change points
//
// A row's input is its boot medians by kernel, on the row's scale as
// package abstat uses it (abmath.ScaleOf: logs where every median is
// positive, so a ratio is a shift). The method is binary segmentation
// over the kernel boundaries: the statistic at a split is the two-sample
// t (pooled variance) of the boots before against the boots after, the
// series' statistic the largest over the splits, and its p a
// permutation test that exchanges boots across the kernels of the
// segment (seeded; Besag and Clifford's sequential p, so a row far from
// significance stops after a few dozen permutations and a changed row
// draws up to 99999, enough for the Monte Carlo p's noise not to cost
// power at the family's level). The rows are one family: their p are corrected with
// Benjamini and Hochberg's q (abmath.BHQ), as kbcompare's rows are, and
// a row with q at most alpha has a change at its largest split; the two
// segments on either side are then tested the same way at the threshold
// that admitted the row (alpha × admitted rows / rows), recursively.
//
// Why this and not e-divisive means (Hunter, Apache Otava): a series
// here has few boots per kernel (3 to 10) and few kernels (4 to 20), and
// splits only between kernels make sense (a kernel's boots are one
// level). E-divisive's statistic is a distance between distributions,
// built for long series of single measurements, with weak power for a
// shift in the mean at a dozen points a side; the t at a split is the
// most powerful statistic for a shift of boot medians that are near
// normal on logs (what abstat's Welch test already assumes), and the
// permutation makes the level exact whatever the number of splits, with
// no normality assumed for the level. The pooled rather than Welch's
// variance: under no change every boot has one spread, and a split near
// an end, with one kernel's few boots on a side, would otherwise get a
// large t from that side's spread being small by chance.
//
// Each change carries the ratio of the segments' centers on either side
// (up to the neighbouring changes) with Welch's interval; the interval
// does not count that the split was chosen where the difference is
// largest. A row without a change carries its mde: the step in the
// middle of the series, and before the last kernel, that the rule finds
// with 80% power at the level a row changed alone reaches (alpha over
// the rows), from the spread within the kernels (MDEShift, a bound from
// above of the permutation test's critical value). BootsFor plans a
// series' boots per kernel at DesignPower (90%), which places a step
// between the right two kernels in at least 80% of series. The
// permutation's smallest p is set by the boots too: 4 kernels of 3
// boots split in the middle cannot go below 2/C(12,6) = 0.002.
//
// # Bisection
//
// Search drives a binary search over images between a good and a bad
// kernel of one row, after the runner confirmed that good and bad
// differ: each step boots the middle image until Wald's sequential
// probability ratio test between "like good" and "like bad" decides it
// (Search says the rule), at error bounds Wrong/steps a side, so that by
// the union bound over the ⌈log2(images+1)⌉ steps the chance of ending at
// the wrong image is at most Wrong (10%), for images whose row is like
// the good kernel's or like the bad's; Wald's bounds hold approximately
// (the overshoot of the last boot makes them conservative), and the
// means and spread are estimates from the confirmation's boots. A step
// at its boot cap ends the search undecided, with the bracket it
// reached. The simulations (sim_test.go) measure both claims on the real
// run of every package; results/2026-12-04-series-simulations.md has
// the figures.
package abseries
