//go:build linux

// Package abfile reads kbench result files: go test -bench output, one
// or more runs appended (a boot each, as `tee -a` across boots or kbab's
// result files hold them), with kbench's "# kbench" comment lines. It is
// the first stage of the A/B tools: abstat judges what it returns,
// kbab checks each boot's id with it, benchcheck and the simulations
// name rows by its rule.
//
// # One pass
//
// Read goes through a file once, in line order: benchfmt's records (the
// results, their configuration and Unit lines) and the lines between them
// (fingerprint lines, boot ids, go test's FAIL, SKIP, ok and FAIL package
// lines, kbench's skip lines) are taken together, so that every result
// and outcome knows its boot and package from the lines above it, with
// no join afterwards.
//
// # Boots
//
// A boot is told apart by its BootIDLine, "# kbench kernel.boot_id: ID",
// which every benchmark package's TestMain prints with its fingerprint
// (internal/benchmain); the lines below it, up to the next boot id line
// with another id, belong to that boot. Lines above any boot id line
// belong to the boot "".
//
// # Rows
//
// A row is named as benchstat names it: its full name without the
// "Benchmark" prefix and with go test's -GOMAXPROCS suffix ("-2", left
// out where GOMAXPROCS is 1): "Syscall/work=getpid/filters=0-2". go test
// names a row in its --- FAIL and --- SKIP lines without the suffix (for
// a failure in the probe run) or with it: WithoutProcs is the one rule
// that strips it.
//
// # Outcomes
//
// Besides results, a file says which rows failed (go test's "--- FAIL:
// BenchmarkX" lines, on their own or on the row's name line), which
// skipped (kbench's skip lines, package skip's doc has their format, and
// go test -v's "--- SKIP" lines with the reason on the line below), and
// which test binaries failed ("FAIL\tpkg\t0.5s"). Each is an Outcome with
// its package, row, boot, line and reason.
package abfile
