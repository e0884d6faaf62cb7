//go:build linux

package cpus

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Topology is what the kernel says of the CPUs a benchmark may use: for
// each, its core (the lowest CPU of its SMT siblings) and its last-level
// cache (the lowest CPU sharing it; -1 where sysfs does not say).
type Topology struct {
	Core map[int]int
	LLC  map[int]int
}

// ReadTopology reads the topology of cpus under root ("/" for this
// machine; tests pass a fake tree): topology/core_cpus_list (Linux 5.x
// and later) or thread_siblings_list for the core, and the shared_cpu_list
// of the highest-level data or unified cache for the LLC. A CPU whose
// files are missing is its own core with an unknown LLC, as on VMs that
// expose no topology.
func ReadTopology(root string, cpus []int) (Topology, error) {
	t := Topology{Core: map[int]int{}, LLC: map[int]int{}}
	for _, c := range cpus {
		dir := filepath.Join(root, "sys/devices/system/cpu", "cpu"+strconv.Itoa(c))
		t.Core[c] = c
		for _, f := range []string{"topology/core_cpus_list", "topology/thread_siblings_list"} {
			if l, ok, err := readList(filepath.Join(dir, f)); err != nil {
				return t, err
			} else if ok {
				t.Core[c] = l[0]
				break
			}
		}
		llc, err := lastLevelCache(dir)
		if err != nil {
			return t, err
		}
		t.LLC[c] = llc
	}
	return t, nil
}

// readList reads a CPU list file; a missing file is not an error (ok
// false), an unreadable or malformed one is.
func readList(path string) (list []int, ok bool, err error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	list, err = ParseList(strings.TrimSpace(string(data)))
	if err != nil {
		return nil, false, fmt.Errorf("%s: %v", path, err)
	}
	return list, true, nil
}

// lastLevelCache returns the lowest CPU sharing the highest-level data
// or unified cache of the CPU at dir, or -1 where no cache is listed.
func lastLevelCache(dir string) (int, error) {
	idx, _ := filepath.Glob(filepath.Join(dir, "cache", "index[0-9]*"))
	best, level := -1, -1
	for _, d := range idx {
		typ, _ := os.ReadFile(filepath.Join(d, "type"))
		if strings.TrimSpace(string(typ)) == "Instruction" {
			continue
		}
		lv, err := os.ReadFile(filepath.Join(d, "level"))
		if err != nil {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(string(lv)))
		if err != nil || n <= level {
			continue
		}
		l, ok, err := readList(filepath.Join(d, "shared_cpu_list"))
		if err != nil {
			return -1, err
		}
		if ok {
			best, level = l[0], n
		}
	}
	return best, nil
}

// Ring orders cpus for placing pairs of sides: the first SMT thread of
// every core before any second one, then by LLC and core. Consecutive
// CPUs in it are on other cores wherever the machine has two, and on one
// LLC where an LLC has two cores; pair i of a cross placement takes ring
// positions i and i+1 (wrapping), so that with n CPUs each holds one end
// of n pairs' first ends and one of their second ends.
func Ring(cpus []int, t Topology) []int {
	rank := map[int]int{} // a CPU's place among its core's threads
	for _, c := range slices.Sorted(slices.Values(cpus)) {
		for _, d := range cpus {
			if d < c && t.Core[d] == t.Core[c] {
				rank[c]++
			}
		}
	}
	ring := slices.Clone(cpus)
	slices.SortFunc(ring, func(a, b int) int {
		for _, d := range [][2]int{{rank[a], rank[b]}, {t.LLC[a], t.LLC[b]}, {t.Core[a], t.Core[b]}, {a, b}} {
			if d[0] != d[1] {
				return d[0] - d[1]
			}
		}
		return 0
	})
	return ring
}

// Relation says how CPUs a and b share the machine: "the same CPU", "SMT
// siblings", "other cores, one LLC", "other cores and LLCs", or "other
// cores" where the LLC is unknown.
func (t Topology) Relation(a, b int) string {
	switch {
	case a == b:
		return "the same CPU"
	case t.Core[a] == t.Core[b]:
		return "SMT siblings"
	case t.LLC[a] < 0 || t.LLC[b] < 0:
		return "other cores"
	case t.LLC[a] == t.LLC[b]:
		return "other cores, one LLC"
	}
	return "other cores and LLCs"
}
