//go:build linux

package options

import (
	"maps"
	"slices"
)

// Catalog names every KBENCH_* variable of the suite, whichever package
// reads it, with a line for the README. A variable in the environment that
// is not listed stops the run, so a typo never falls back to a default.
var Catalog = map[string]string{
	"KBENCH_COUNTERS":     "every binary: on (the default counters), off, or a comma-separated list of counters (task-clock, context-switches, cpu-migrations, page-faults, cycles, instructions, branch-misses, cache-misses, iTLB-load-misses, softirqs, ipis) each row reports per op; one the machine cannot count is skipped with a note in the fingerprint.",
	"KBENCH_FILTERS":      "seccompbench: filter counts for BenchmarkSyscall (UnixBench's report used 1, 4 and 32).",
	"KBENCH_VICTIM_CPU":   "seccompbench: the CPU BenchmarkBystander pins its victim to; loaders take the other usable CPUs.",
	"KBENCH_PULSE":        "every binary: off, sham or protect; one PR_SPEC_INDIRECT_BRANCH pulse per online CPU before the first test or benchmark (report 000); protect's after-effect lasts until reboot and unlocks prctlbench's protect rows.",
	"KBENCH_REDIS_ADDR":   "redisbench: host:port of a running loopback Redis server to use instead of starting one; the benchmark refuses a non-empty database.",
	"KBENCH_REDIS_DB":     "redisbench: the database number used on the KBENCH_REDIS_ADDR server.",
	"KBENCH_REDIS_SERVER": "redisbench: the redis-server executable to start (default: redis-server from PATH).",
	"KBENCH_NET_FLOWS":    "netbench: flow counts (parallel netperf clients) for BenchmarkTCPCRR and BenchmarkTCPRR; lkp's report ran 16.",
	"KBENCH_NET_LISTEN":   "netbench: ip:port TestServe listens on when it runs a netbench server for remote mode.",
	"KBENCH_NET_SERVER":   "netbench: ip:port of a netbench server on another host; unset runs the server in-process on loopback.",
	"KBENCH_PROFILE":      "every binary: a directory; each benchmark row's every -count run writes a pprof profile of its timed region there (kernel and user call chains, system-wide where permitted).",
	"KBENCH_VM_KERNEL":    "internal/cmd/vmexec's tests: a kernel image (bzImage, /boot/vmlinuz-*) their real guest boots use; unset, those tests skip.",
	"KBENCH_SINCE":        "every test binary: skip or fail; what a missing kernel feature does on a kernel at or above the release that brought it (skip.Unsupported's Since); unset, fail where CI is set, else skip.",
	"KBENCH_PROFILE_HZ":   "every binary: samples per second per CPU for KBENCH_PROFILE (default 4000, perf's).",
}

// Known reports whether name is in the catalog.
func Known(name string) bool {
	_, ok := Catalog[name]
	return ok
}

// Names lists the catalog in order.
func Names() []string { return slices.Sorted(maps.Keys(Catalog)) }
