//go:build linux

package options

import "slices"

// catalog names every KBENCH_* variable of the suite, whichever package
// declares it. A test binary links only some of the declarations, yet a
// variable meant for another binary must not stop it: a name in the
// environment that is neither declared nor listed here stops the run, so
// a typo never falls back to a default. What a variable means is said
// once, in its declaration; TestCatalogTable checks that this list and
// docs/running.md's table are exactly the declarations.
var catalog = []string{
	"KBENCH_COUNTERS",
	"KBENCH_FILTERS",
	"KBENCH_NET_FLOWS",
	"KBENCH_NET_LISTEN",
	"KBENCH_NET_SERVER",
	"KBENCH_PROFILE",
	"KBENCH_PROFILE_HZ",
	"KBENCH_PULSE",
	"KBENCH_REDIS_ADDR",
	"KBENCH_REDIS_DB",
	"KBENCH_REDIS_SERVER",
	"KBENCH_SINCE",
	"KBENCH_VICTIM_CPU",
	"KBENCH_VM_KERNEL",
}

// known reports whether name is in the catalog.
func known(name string) bool { return slices.Contains(catalog, name) }

// names lists the catalog in order.
func names() []string { return slices.Sorted(slices.Values(catalog)) }
