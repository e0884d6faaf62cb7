//go:build linux

// Package abplan is the design stage of an A/B: the sequential design
// of a planned A/B (kbab -target): which boots to run next, at what
// -count, and when a row is decided, cut short by the budget, or out of
// reach; kbcompare -plan prints the same design for a pilot already run
// (PlanFiles), so that there is one planner. The rule is Stein's
// two-stage test (abmath.Rule; C. Stein, Ann. Math. Statist. 16, 1945):
// a pilot of boots at one fixed -count, whose pooled variance of boot
// medians alone fixes each row's boots and the critical value, so that
// the false-alarm rate is alpha by construction and a change of the
// target is found with at least the design's power whatever the
// spread. Each row is planned at alpha over the rows planned, since the
// report judges by q and a row changed alone has q = p x rows.
//
// Design is the one type that runs it: kbab drives it boot pair by boot
// pair (internal/cmd/kbab/planned.go), and the simulations drive the
// same type on the suite's real run (sim_test.go; their figures are in
// results/2026-12-03-sequential-design.md). A Design is also an
// abstat.Designed: the report tests the rows it planned by its rule.
//
// Why a package of its own: the design reads the judged rows of package
// abstat and decides what kbab runs; abstat judges and knows nothing of
// designs but the hook (abstat.Designed). docs/comparing.md states the
// guarantees and their limits.
package abplan
