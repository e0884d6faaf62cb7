//go:build linux

package counters

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kbench/kbench/internal/procfs"
	"github.com/kbench/kbench/internal/unit"
)

// readTable parses a fixture, a real /proc/softirqs or /proc/interrupts.
func readTable(t *testing.T, name string) []procfs.CPUTableLine {
	t.Helper()
	path := filepath.Join("testdata", name)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := procfs.ParseCPUTable(path, data)
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

func asMap(pc []procCount) map[string]uint64 {
	m := map[string]uint64{}
	for _, c := range pc {
		m[c.unit] = c.total
	}
	return m
}

func TestParseSoftirqs(t *testing.T) {
	for _, tc := range []struct {
		file  string
		units []string
		some  map[string]uint64
	}{
		// Linux 6.18 on this 2-CPU VM.
		{"softirqs-6.18-x86", []string{"softirq-hi/op", "softirq-timer/op", "softirq-net-tx/op", "softirq-net-rx/op",
			"softirq-block/op", "softirq-irq-poll/op", "softirq-tasklet/op", "softirq-sched/op", "softirq-hrtimer/op", "softirq-rcu/op"},
			map[string]uint64{"softirq-net-rx/op": 9683975, "softirq-timer/op": 39381, "softirq-rcu/op": 383374}},
		// Linux 4.4, 4 CPUs: BLOCK_IOPOLL, renamed IRQ_POLL in 4.5.
		{"softirqs-4.4-x86", []string{"softirq-hi/op", "softirq-timer/op", "softirq-net-tx/op", "softirq-net-rx/op",
			"softirq-block/op", "softirq-block-iopoll/op", "softirq-tasklet/op", "softirq-sched/op", "softirq-hrtimer/op", "softirq-rcu/op"},
			map[string]uint64{"softirq-hi/op": 3, "softirq-net-rx/op": 45678 + 23456 + 12345 + 6789, "softirq-block-iopoll/op": 0}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			pc := softirqCounts(readTable(t, tc.file))
			var units []string
			for _, c := range pc {
				units = append(units, c.unit)
				if _, ok := unit.Units[c.unit]; !ok {
					t.Errorf("%s is not in unit.Units", c.unit)
				}
			}
			if !slices.Equal(units, tc.units) {
				t.Errorf("units %v, want %v", units, tc.units)
			}
			m := asMap(pc)
			for u, want := range tc.some {
				if m[u] != want {
					t.Errorf("%s = %d, want %d", u, m[u], want)
				}
			}
		})
	}
}

func TestParseIPIs(t *testing.T) {
	for _, tc := range []struct {
		file string
		want []procCount
	}{
		{"interrupts-6.18-x86", []procCount{{"ipi-res/op", 368738}, {"ipi-cal/op", 636584}, {"ipi-tlb/op", 121336}}},
		// Linux 4.4, 4 CPUs, with ERR and MIS lines of one number.
		{"interrupts-4.4-x86", []procCount{{"ipi-res/op", 100000}, {"ipi-cal/op", 1000}, {"ipi-tlb/op", 100}}},
		// arm64 numbers its IPIs and has no TLB shootdown IPI.
		{"interrupts-6.1-arm64", []procCount{{"ipi-res/op", 1000}, {"ipi-cal/op", 75}}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			pc := ipiCounts(readTable(t, tc.file))
			if !slices.Equal(pc, tc.want) {
				t.Errorf("got %v, want %v", pc, tc.want)
			}
		})
	}
}

func TestDelta(t *testing.T) {
	before := []procCount{{"ipi-res/op", 10}, {"ipi-cal/op", 5}}
	after := []procCount{{"ipi-res/op", 15}, {"ipi-cal/op", 4}} // a CPU went offline
	d, err := delta(before, after)
	if err != nil || !slices.Equal(d, []procCount{{"ipi-res/op", 5}, {"ipi-cal/op", 0}}) {
		t.Errorf("delta = %v, %v", d, err)
	}
	if _, err := delta(before, after[:1]); err == nil {
		t.Error("delta of tables with different lines accepted")
	}
}

func TestReadLiveProc(t *testing.T) {
	for _, name := range []string{"softirqs", "ipis"} {
		pc, err := readProc(name)
		if err != nil {
			t.Skipf("%s: %v", name, err)
		}
		if len(pc) == 0 {
			t.Errorf("%s: nothing read", name)
		}
	}
}
