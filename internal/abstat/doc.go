//go:build linux

// Package abstat holds the statistics of an A/B comparison of two kbench
// result files, as package abfile reads them (go test -bench output, one
// run per boot, with kbench's fingerprint lines): grouping each row's
// samples by boot,
// the tests (Welch's t-test on boot medians with MinBoots boots a side,
// benchstat's U-test per sample otherwise), the interval of each change,
// what each row could have detected (power), and one verdict per row,
// corrected for the number of rows compared. kbcompare renders its
// Report; kbab judges its boots with it in-process.
//
// It judges and writes nothing for a reader: a row's verdict is given in
// one function (Report.verdict, from its outcome, the sides that hold
// it, its test and its p or q); what failed or skipped a row is data
// (Outcome), the plan of boots is package abplan's, and every form of
// the report is package abreport's.
//
// Why a package: the statistics are one mechanism with two users, and
// the design (package abplan's sequential design) and a series (package
// abseries) read the same grouped samples (Grouped); the numbers
// themselves are package abmath's. Each concern is a file: compare.go
// groups and judges, boots.go, interval.go and power.go test, family.go
// decides which unit is a row's verdict and its q-value, attribution.go
// the counters under a row, setup.go, outcomes.go and geomean.go the
// setup lines, failures, skips and geomeans; design.go the hook by which
// a design that fixed a row's test before its boots ran (package abplan:
// Stein's two-stage test, kbab -target) tests the row instead of
// Welch's. Package sim holds the fixtures the tests of several packages
// share and draws simulated comparisons of the whole suite from its
// real run.
//
// docs/kbcompare.md gives the formulas, the choices and why.
package abstat
