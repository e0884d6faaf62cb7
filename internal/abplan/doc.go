//go:build linux

// Package abplan is the design stage of an A/B (kbab -target): which
// boots to run next, at what -count, and when a row is decided, cut
// short by the budget, or out of reach, by Stein's two-stage test
// (abmath.Rule). Design runs it for kbab and the simulations alike,
// and tests the rows it planned for the report (TestRow), as Paired
// tests a fixed duet's; kbcompare -plan prints the same design for a
// pilot already run (PlanFiles).
// docs/comparing.md states the guarantees and their limits.
package abplan
