//go:build linux

package cpus

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// fakeTopology writes a sysfs tree under a temporary root: cores and llcs
// are CPU lists ("0,4"), one per core and one per LLC.
func fakeTopology(t *testing.T, cores, llcs []string) string {
	t.Helper()
	root := t.TempDir()
	write := func(rel, s string) {
		p := filepath.Join(root, "sys/devices/system/cpu", rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, sets := range []struct {
		lists []string
		files func(cpu int, list string)
	}{
		{cores, func(c int, l string) { write("cpu"+strconv.Itoa(c)+"/topology/core_cpus_list", l) }},
		{llcs, func(c int, l string) {
			d := "cpu" + strconv.Itoa(c) + "/cache/"
			write(d+"index0/level", "1")
			write(d+"index0/type", "Instruction")
			write(d+"index0/shared_cpu_list", strconv.Itoa(c))
			write(d+"index1/level", "3")
			write(d+"index1/type", "Unified")
			write(d+"index1/shared_cpu_list", l)
		}},
	} {
		for _, l := range sets.lists {
			cs, err := ParseList(l)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cs {
				sets.files(c, l)
			}
		}
	}
	return root
}

// TestRing: the ring puts other cores next to each other (one LLC first),
// and Relation names what the first pair shares.
func TestRing(t *testing.T) {
	for _, c := range []struct {
		name        string
		cpus        []int
		cores, llcs []string
		ring        []int
		rel         string
	}{
		{"2 cores, one LLC", []int{0, 1}, []string{"0", "1"}, []string{"0-1"}, []int{0, 1}, "other cores, one LLC"},
		{"4 cores x 2 threads, 2 LLCs", []int{0, 1, 2, 3, 4, 5, 6, 7},
			[]string{"0,4", "1,5", "2,6", "3,7"}, []string{"0-1,4-5", "2-3,6-7"}, []int{0, 1, 2, 3, 4, 5, 6, 7}, "other cores, one LLC"},
		{"one core x 2 threads", []int{0, 1}, []string{"0-1"}, []string{"0-1"}, []int{0, 1}, "SMT siblings"},
		{"2 LLCs of one SMT core each", []int{0, 1, 2, 3}, []string{"0,2", "1,3"}, []string{"0,2", "1,3"}, []int{0, 1, 2, 3}, "other cores and LLCs"},
		{"siblings numbered next to each other", []int{0, 1, 2, 3}, []string{"0-1", "2-3"}, []string{"0-3"}, []int{0, 2, 1, 3}, "other cores, one LLC"},
		{"an affinity mask of 2 of 4", []int{1, 3}, []string{"0-1", "2-3"}, []string{"0-3"}, []int{1, 3}, "other cores, one LLC"},
		{"no topology in sysfs", []int{0, 1}, nil, nil, []int{0, 1}, "other cores"},
	} {
		topo, err := ReadTopology(fakeTopology(t, c.cores, c.llcs), c.cpus)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		ring := Ring(c.cpus, topo)
		if !slices.Equal(ring, c.ring) {
			t.Errorf("%s: ring %v, want %v", c.name, ring, c.ring)
		}
		if rel := topo.Relation(ring[0], ring[1]); rel != c.rel {
			t.Errorf("%s: CPUs %d and %d are %q, want %q", c.name, ring[0], ring[1], rel, c.rel)
		}
	}
}

// TestReadTopologyRejectsBadList: a malformed sysfs list is an error
// naming the file, not a guess.
func TestReadTopologyRejectsBadList(t *testing.T) {
	root := fakeTopology(t, []string{"0"}, nil)
	p := filepath.Join(root, "sys/devices/system/cpu/cpu0/topology/core_cpus_list")
	if err := os.WriteFile(p, []byte("zero\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadTopology(root, []int{0}); err == nil {
		t.Fatal("a core_cpus_list of \"zero\" was accepted")
	}
}

// TestReadTopologyHere reads this machine's: every usable CPU has a core
// among the usable or online CPUs.
func TestReadTopologyHere(t *testing.T) {
	usable, err := Usable()
	if err != nil {
		t.Fatal(err)
	}
	topo, err := ReadTopology("/", usable)
	if err != nil {
		t.Fatal(err)
	}
	ring := Ring(usable, topo)
	if !slices.Equal(slices.Sorted(slices.Values(ring)), usable) {
		t.Errorf("ring %v is not a reordering of the usable CPUs %v", ring, usable)
	}
	for _, c := range usable {
		if core := topo.Core[c]; core > c {
			t.Errorf("CPU %d: core %d, want its lowest sibling", c, core)
		}
	}
}

// FuzzParseList: the kernel's CPU lists come from sysfs; any input gives
// a sorted list without repeats or an error, never a panic.
func FuzzParseList(f *testing.F) {
	for _, s := range []string{"0", "0-3", "0-1,4,6-7", "", "3-1", "1,,2", "0-99999999999999999999", "0-65536"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := ParseList(s)
		if err != nil {
			return
		}
		if len(l) == 0 || !slices.IsSorted(l) || len(slices.Compact(slices.Clone(l))) != len(l) {
			t.Fatalf("ParseList(%q) = %v", s, l)
		}
	})
}
