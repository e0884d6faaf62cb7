//go:build linux

// Package abstat holds the statistics of an A/B comparison of two kbench
// result files, as package abfile reads them: each row's samples grouped
// by boot, the tests (Welch's t-test on boot medians with MinBoots boots
// a side, benchstat's U-test per sample otherwise), the interval of each
// change, what each row could have detected (power), and one verdict per
// row (Report.verdict), corrected for the number of rows compared. It
// writes nothing for a reader: kbcompare and kbab render its Report with
// package abreport. A design (package abplan, which tests the rows it
// planned through Options.Design) and a series (package abseries)
// read the same grouped samples (Grouped); the numbers are package
// abmath's. Package sim holds the fixtures the tests of several packages
// share. docs/kbcompare.md gives the formulas, the choices and why.
package abstat
