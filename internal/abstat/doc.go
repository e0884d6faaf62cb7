//go:build linux

// Package abstat holds the statistics of an A/B comparison of two kbench
// result files, as package abfile reads them: each row's samples grouped
// by boot, the tests (Welch's t-test on boot medians with MinBoots boots
// a side, benchstat's U-test per sample otherwise, or a design's:
// Options.Design), the interval of each change, what each row could have
// detected, and one verdict per row corrected for the number of rows
// compared. It writes nothing for a reader (package abreport does); the
// numbers are package abmath's. docs/kbcompare.md gives the formulas
// and why.
package abstat
