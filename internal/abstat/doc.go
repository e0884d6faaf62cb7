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
// Why a package: the statistics are one mechanism with two users, and
// the experiment's design (variance components, a plan of boots and
// samples per row) reads the same grouped samples. Each
// concern is a file: compare.go groups and judges, boots.go, welch.go, interval.go and power.go test, family.go
// decides which unit is a row's verdict and its q-value, scale.go is the
// one Scale every test uses, attribution.go the counters under a row,
// setup.go, outcomes.go and geomean.go the setup lines, failures, skips
// and geomeans; components.go holds each row's variance within and between
// boots and a sample's cost, plan.go the boots and -count per row and
// package that reach a target mde (kbcompare -plan), each row at alpha
// over the rows planned, since the report judges by q and a row changed
// alone has q = p x rows (PlanOptions.PerRow for a report judged by p);
// design.go the hook by which a design that fixed a row's test before
// its boots ran (package abplan: Stein's two-stage test, kbab -target)
// tests the row instead of Welch's. Package sim holds the fixtures and
// draws simulated comparisons of the whole suite from its real run.
//
// docs/kbcompare.md gives the formulas, the choices and why.
package abstat
