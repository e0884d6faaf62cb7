// Package fingerprint records the machine and kernel setup a result was
// measured on: what lkp and MMTests print above their tables, and what a
// kernel reviewer reads first (release, cmdline, microcode, mitigations).
//
// The fingerprint is written as comment lines, "# kbench key: value", that
// benchfmt and benchstat skip: a `key: value` configuration line that
// differs between two kernels would make benchstat split the comparison
// into separate tables. kbcompare and people read them with Parse.
package fingerprint

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// Prefix starts every fingerprint line.
const Prefix = "# kbench "

// Field is one recorded fact.
type Field struct{ Key, Value string }

// Collect reads the fingerprint below root ("/" for the running machine;
// tests pass a fixture tree). A missing or unreadable file is recorded as
// such, never an error.
func Collect(root string) []Field {
	r := reader{root}
	fields := []Field{
		{"kernel.release", r.line("proc/sys/kernel/osrelease")},
		{"kernel.version", r.line("proc/sys/kernel/version")},
		{"kernel.cmdline", r.line("proc/cmdline")},
		// Ties results to one boot: the speculation-control A/B must
		// compare runs from different boots, each after its own sweep.
		{"kernel.boot_id", r.line("proc/sys/kernel/random/boot_id")},
	}
	cpuinfo, cpuErr := r.read("proc/cpuinfo")
	fields = append(fields,
		Field{"cpu.model", cpuinfoField(cpuinfo, cpuErr, "model name", "Hardware", "CPU part")},
		Field{"cpu.microcode", cpuinfoField(cpuinfo, cpuErr, "microcode")},
		Field{"cpu.online", r.line("sys/devices/system/cpu/online")},
		Field{"cpu.smt.active", r.line("sys/devices/system/cpu/smt/active")},
		Field{"cpu.smt.control", r.line("sys/devices/system/cpu/smt/control")},
		Field{"cpufreq.governor", r.governors()},
	)
	fields = append(fields, r.vulnerabilities()...)
	fields = append(fields,
		Field{"sysctl.net.core.bpf_jit_enable", r.line("proc/sys/net/core/bpf_jit_enable")},
		Field{"sysctl.net.core.bpf_jit_harden", r.line("proc/sys/net/core/bpf_jit_harden")},
		Field{"go.version", runtime.Version()},
	)
	return fields
}

type reader struct{ root string }

func (r reader) read(rel string) (string, error) {
	data, err := os.ReadFile(filepath.Join(r.root, rel))
	return string(data), err
}

// line returns a one-line file's content, or a note saying why there is none.
func (r reader) line(rel string) string {
	s, err := r.read(rel)
	if err != nil {
		return missing(err)
	}
	return clean(s)
}

func missing(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	if errors.Is(err, fs.ErrNotExist) {
		return "(missing)"
	}
	return "(unreadable: " + err.Error() + ")"
}

// clean folds a value onto one line.
func clean(s string) string { return strings.Join(strings.Fields(s), " ") }

// cpuinfoField returns the first of keys present in /proc/cpuinfo; when
// CPUs disagree (mixed microcode after a partial update) all values show.
func cpuinfoField(cpuinfo string, err error, keys ...string) string {
	if err != nil {
		return missing(err)
	}
	for _, key := range keys {
		var vals []string
		sc := bufio.NewScanner(strings.NewReader(cpuinfo))
		for sc.Scan() {
			k, v, ok := strings.Cut(sc.Text(), ":")
			if ok && strings.TrimSpace(k) == key && !slices.Contains(vals, clean(v)) {
				vals = append(vals, clean(v))
			}
		}
		if len(vals) > 0 {
			return strings.Join(vals, " | ")
		}
	}
	return "(missing)"
}

// governors summarises scaling_governor over CPUs: "performance (cpu0-3)".
func (r reader) governors() string {
	paths, _ := filepath.Glob(filepath.Join(r.root, "sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_governor"))
	if len(paths) == 0 {
		return "(missing)"
	}
	byGov := map[string][]int{}
	for _, p := range paths {
		var cpu int
		if _, err := fmt.Sscanf(filepath.Base(filepath.Dir(filepath.Dir(p))), "cpu%d", &cpu); err != nil {
			continue
		}
		data, err := os.ReadFile(p)
		gov := clean(string(data))
		if err != nil {
			gov = missing(err)
		}
		byGov[gov] = append(byGov[gov], cpu)
	}
	var parts []string
	for _, gov := range slices.Sorted(mapsKeys(byGov)) {
		c := byGov[gov]
		slices.Sort(c)
		parts = append(parts, fmt.Sprintf("%s (%s)", gov, FormatCPUList(c)))
	}
	return strings.Join(parts, ", ")
}

func (r reader) vulnerabilities() []Field {
	dir := filepath.Join(r.root, "sys/devices/system/cpu/vulnerabilities")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return []Field{{"vuln", missing(err)}}
	}
	var fields []Field
	for _, e := range entries {
		fields = append(fields, Field{"vuln." + e.Name(), r.line(filepath.Join("sys/devices/system/cpu/vulnerabilities", e.Name()))})
	}
	return fields
}

// FormatCPUList writes sorted CPUs in the kernel's list format.
func FormatCPUList(cpus []int) string {
	var b strings.Builder
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		if j > i {
			fmt.Fprintf(&b, "%d-%d", cpus[i], cpus[j])
		} else {
			fmt.Fprintf(&b, "%d", cpus[i])
		}
		i = j + 1
	}
	return b.String()
}

func mapsKeys[M ~map[K]V, K comparable, V any](m M) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// Write prints fields as fingerprint lines.
func Write(w io.Writer, fields []Field) error {
	for _, f := range fields {
		if _, err := fmt.Fprintf(w, "%s%s: %s\n", Prefix, f.Key, clean(f.Value)); err != nil {
			return err
		}
	}
	return nil
}

// Parse reads the fingerprint lines of a result file, in order. A key
// seen again (one fingerprint per test binary) keeps its first value
// unless the values differ, in which case they are joined with " | " so a
// reader sees that the setup changed during the run.
func Parse(r io.Reader) ([]Field, error) {
	var fields []Field
	index := map[string]int{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), Prefix)
		if !ok {
			continue
		}
		key, val, ok := strings.Cut(rest, ": ")
		if !ok || key == "" || strings.ContainsAny(key, " \t") {
			continue
		}
		if i, seen := index[key]; seen {
			if !slices.Contains(strings.Split(fields[i].Value, " | "), val) {
				fields[i].Value += " | " + val
			}
			continue
		}
		index[key] = len(fields)
		fields = append(fields, Field{key, val})
	}
	return fields, sc.Err()
}
