//go:build linux

// Package abplan is the design stage of an A/B: the sequential design
// of a planned A/B (kbab -target), which boots to run next, at what
// -count, and when a row is decided, cut short by the budget, or out of
// reach, by Stein's two-stage test (abmath.Rule: a pilot's variance
// alone fixes each row's boots, so that the false-alarm rate is alpha
// and the power at the target the design's at every spread; each row
// planned at alpha over the rows planned, as the report judges by q).
// kbcompare -plan prints the same design for a pilot already run
// (PlanFiles): one planner. Design is the one type that runs it, driven
// by kbab (internal/cmd/kbab/planned.go) and the simulations alike; it
// is also an abstat.Options.Design (TestRow), so the report tests the rows it planned by
// its rule. docs/comparing.md states the guarantees and their limits.
package abplan
