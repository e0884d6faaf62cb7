//go:build linux

// Package internal holds no code: its doc is the map of kbench's
// packages, in layers, and layers_test.go checks every import of the
// module against it.
//
// # Layers
//
// Lowest first. A package may import the packages of its own layer and of
// the layers named after "->" on its layer's line, and no other package
// of this module. Test files of a package follow its layer; an external
// test package (package x_test) may import what a benchmark may and what
// its own package may. A package in no layer fails the test: add it
// here. A pattern ending in "/*" takes every package below it; "*"
// alone, every package at the module's root (the benchmarks, which
// internal/registry lists).
//
//	os:         internal/skip internal/cpus internal/procfs internal/thread
//	            internal/child internal/gotool internal/limits
//	harness:    internal/options internal/unit internal/fingerprint
//	            internal/region internal/rounds internal/testflags
//	            internal/registry -> os
//	instrument: internal/perfevent internal/counters internal/kprofile
//	            -> harness os
//	workload:   internal/seccompfilter internal/redisserver internal/pulse
//	            internal/unixbench internal/peer -> harness os
//	driver:     internal/benchmain -> instrument workload harness os
//	benchmark:  * -> driver instrument workload harness os
//	abmath:     internal/abmath
//	abfile:     internal/abfile internal/abstat/sim -> abmath harness os
//	abstat:     internal/abstat internal/profdelta internal/abseries
//	            -> abmath abfile instrument harness os
//	abplan:     internal/abplan -> abmath abstat abfile harness os
//	abreport:   internal/abreport -> abmath abplan abstat abfile
//	            instrument harness os
//	cmd:        internal/cmd/* internal/lkpstat internal/vmflags
//	            internal/kernelbuild
//	            internal/percent
//	            -> abreport abplan abstat abmath abfile instrument
//	            workload harness os
//
// The OS and runtime layer is one package per kernel or runtime interface
// (threads, child processes, CPUs, /proc, skips). The harness runs rows:
// options, the fingerprint, the units, the registry of benchmarks, the
// timed region, and the timed rounds of rows whose ops run elsewhere than
// in the row's goroutine.
// testflags is the one reader of go test's and a test binary's command
// lines (rounds reads -test.benchtime by it, kbab and vmexec what they
// pass and receive). The instruments measure inside a region. Workload helpers are what a
// benchmark's work needs beyond the OS layer (seccomp filters, a
// redis-server, pulses, UnixBench's loop). benchmain is the TestMain of
// every benchmark package. The tools are the A/B stages, a layer each in
// the order the data flows, so that no stage imports a later one:
// abmath holds their statistics as pure numbers (Welch, t quantiles,
// Stein's rule, Benjamini-Hochberg, power, intervals); abfile reads result files in one pass (abstat/sim, the fixtures and
// simulation the stages' tests share, reads through it); abstat judges
// (and profdelta, the kernel profiles' deltas across boots; abseries,
// the change points and bisection of a series of kernels); abplan
// designs (the plan of a fixed design from a pilot, the sequential
// design); abreport makes one record per kind of report and renders
// every form of it (text, brief, JSON, pictures, the plan and kbab's
// report); the commands (cmd/*, with
// lkpstat and the tools' shared flag types, vmflags for the guest and
// percent for percentages) keep flags and exit statuses.
//
// # Linux only
//
// kbench measures the Linux kernel and builds for GOOS=linux only: every
// file carries //go:build linux, and on any other GOOS the build stops at
// internal/notlinux.go, which says so. layers_test.go checks both.
//
// # File names
//
// A file is named for what it does (sock.go, netstat.go), its tests and
// fuzz targets beside it (sock_test.go, or fuzz_test.go for a package's
// parsers together). Since the build tag
// already makes every file Linux-only, no file carries a GOOS suffix: a
// _linux.go beside files without one would say that the others are not.
//
// An instrument attaches to every row as package region's doc says
// (section Instruments); no benchmark package names its instruments.
package internal
