//go:build linux

// Package abfile reads kbench result files: go test -bench output, one
// or more runs appended (a boot each, as `tee -a` across boots or kbab's
// result files hold them), with kbench's "# kbench" comment lines. It is
// the first stage of the A/B tools: abstat judges what it returns, kbab
// checks each boot's id with it, benchcheck and the simulations name
// rows by its rule.
//
// Read goes through a file once, in line order: benchfmt's records and
// the lines between them (fingerprint lines, boot ids, go test's FAIL,
// SKIP, ok and FAIL package lines, kbench's skip lines) are taken
// together, so that every result and outcome knows its boot (the last
// BootIDLine above it; "" above any) and package from the lines above
// it, with no join afterwards. Rows are named as benchstat names them;
// WithoutProcs is the one rule for go test's names of them without the
// -GOMAXPROCS suffix. docs/kbcompare.md says what a file may hold and
// how each line is taken.
package abfile
