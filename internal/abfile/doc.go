//go:build linux

// Package abfile reads kbench result files: go test -bench output, one
// or more runs appended (a boot each), with kbench's "# kbench" comment
// lines. Read goes through a file once, in line order, benchfmt's
// records and the lines between them (fingerprint lines, boot ids, go
// test's FAIL, SKIP and ok lines, kbench's skip lines) together, so that
// every result and outcome knows its boot and package from the lines
// above it. docs/kbcompare.md says what a file may hold.
package abfile
