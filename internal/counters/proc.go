//go:build linux

package counters

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// procCount is one line of a /proc table summed over CPUs.
type procCount struct {
	unit  string // the per-op unit it reports
	total uint64
}

// scanTable reads a per-CPU table of /proc (softirqs, interrupts): a
// header naming the CPUs, then "LABEL: count count ... [description]"
// lines, one count per CPU of the header (fewer on some lines, such as
// x86's ERR). It calls line with each line's label, the sum of its counts
// and the description after them; lines without a count are passed over.
func scanTable(path string, data []byte, line func(label string, sum uint64, desc string) error) error {
	ncpu := -1
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		text := sc.Text()
		if ncpu < 0 {
			ncpu = len(strings.Fields(text))
			if ncpu == 0 || !strings.HasPrefix(strings.TrimSpace(text), "CPU") {
				return fmt.Errorf("%s: header %q does not name CPUs", path, text)
			}
			continue
		}
		label, rest, ok := strings.Cut(text, ":")
		label = strings.TrimSpace(label)
		if !ok || label == "" {
			continue
		}
		sum, n := sumCounts(rest, ncpu)
		if n == 0 {
			continue
		}
		if err := line(label, sum, strings.Join(strings.Fields(rest)[n:], " ")); err != nil {
			return err
		}
	}
	if ncpu < 0 {
		return fmt.Errorf("%s is empty", path)
	}
	return sc.Err()
}

// parseSoftirqs reads /proc/softirqs, one line per softirq type with a
// count per possible CPU, and returns each type's sum over CPUs as
// softirq-<type>/op, in the file's order. Types are named by the kernel
// (BLOCK_IOPOLL before 4.5, IRQ_POLL since).
func parseSoftirqs(data []byte) ([]procCount, error) {
	var out []procCount
	err := scanTable("/proc/softirqs", data, func(label string, sum uint64, _ string) error {
		out = append(out, procCount{unit: softirqUnit(label), total: sum})
		return nil
	})
	return out, err
}

// softirqUnit names a softirq type's unit: NET_RX is softirq-net-rx/op.
func softirqUnit(name string) string {
	return "softirq-" + strings.ToLower(strings.ReplaceAll(name, "_", "-")) + "/op"
}

// ipiUnits maps the IPI lines of /proc/interrupts to units: x86 names them
// RES, CAL and TLB; other architectures number them (arm64's "IPI0:") and
// say what they are in the description, which is matched instead.
var ipiUnits = []struct{ label, desc, unit string }{
	{"RES", "Rescheduling interrupts", "ipi-res/op"},
	{"CAL", "Function call interrupts", "ipi-cal/op"},
	{"TLB", "TLB shootdowns", "ipi-tlb/op"},
}

// parseIPIs reads the rescheduling, function-call and TLB-shootdown IPI
// lines of /proc/interrupts, each summed over the online CPUs the header
// names, in ipiUnits' order. A kind the file lacks (arm64 has no TLB
// shootdown IPI) is left out.
func parseIPIs(data []byte) ([]procCount, error) {
	found := map[string]uint64{}
	err := scanTable("/proc/interrupts", data, func(label string, sum uint64, desc string) error {
		for _, u := range ipiUnits {
			if label == u.label || desc == u.desc {
				found[u.unit] += sum
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []procCount
	for _, u := range ipiUnits {
		if v, ok := found[u.unit]; ok {
			out = append(out, procCount{unit: u.unit, total: v})
		}
	}
	return out, nil
}

// sumCounts adds the leading numeric fields of rest, at most ncpu of
// them, and says how many there were.
func sumCounts(rest string, ncpu int) (sum uint64, n int) {
	for _, f := range strings.Fields(rest) {
		if n == ncpu {
			break
		}
		v, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			break
		}
		sum += v
		n++
	}
	return sum, n
}

// delta subtracts two readings of the same file; a line that appeared or
// went away between them is an error (a CPU hotplug changes sums, not
// lines).
func delta(before, after []procCount) ([]procCount, error) {
	if len(before) != len(after) {
		return nil, fmt.Errorf("%d lines before, %d after", len(before), len(after))
	}
	out := make([]procCount, len(after))
	for i := range after {
		if before[i].unit != after[i].unit {
			return nil, fmt.Errorf("line %d was %s, now %s", i, before[i].unit, after[i].unit)
		}
		out[i] = procCount{unit: after[i].unit}
		if after[i].total >= before[i].total {
			out[i].total = after[i].total - before[i].total
		}
	}
	return out, nil
}
