//go:build linux

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
	"strconv"
	"strings"

	"github.com/kbench/kbench/internal/procfs"
	"github.com/kbench/kbench/internal/thread"
	"golang.org/x/sys/unix"
)

// Prefix starts every fingerprint line.
const Prefix = "# kbench "

// Field is one recorded fact.
type Field struct{ Key, Value string }

// Collect reads the fingerprint below root ("/" for the running machine;
// tests pass a fixture tree). A missing or unreadable file is recorded as
// such, never an error.
func Collect(root string) []Field {
	r := newReader(root)
	fields := []Field{
		{"kernel.release", r.sysctl("kernel.osrelease")},
		{"kernel.version", r.sysctl("kernel.version")},
		{"kernel.cmdline", value(r.proc.Cmdline())},
		// Ties results to one boot: the speculation-control A/B must
		// compare runs from different boots, each after its own sweep.
		{"kernel.boot_id", value(r.proc.BootID())},
	}
	cpuinfo, cpuErr := r.proc.CPUInfo()
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
		Field{"sysctl.net.core.bpf_jit_enable", r.sysctl("net.core.bpf_jit_enable")},
		Field{"sysctl.net.core.bpf_jit_harden", r.sysctl("net.core.bpf_jit_harden")},
		// Layout, frequency and idle state decide the loopback and
		// wakeup-heavy rows as much as the code under test does.
		Field{"kernel.kaslr", r.kaslr()},
		Field{"cpufreq.boost", r.boost()},
		Field{"cpuidle.driver", r.line("sys/devices/system/cpu/cpuidle/current_driver")},
		Field{"cpuidle.governor", r.firstLine("sys/devices/system/cpu/cpuidle/current_governor",
			"sys/devices/system/cpu/cpuidle/current_governor_ro")},
		Field{"thp.enabled", r.selected("sys/kernel/mm/transparent_hugepage/enabled")},
		Field{"thp.defrag", r.selected("sys/kernel/mm/transparent_hugepage/defrag")},
		Field{"go.version", runtime.Version()},
	)
	fields = append(fields, r.vm()...)
	return append(fields, Process()...)
}

// VMFile is where a VM wrapper (vmexec) leaves what only the host knows
// about the guest a binary runs in: accelerator, vCPUs, memory, the
// engine's version, the host's kernel, vCPU pinning. Each line is
// "vm.KEY: VALUE"; the file is absent on bare metal.
const VMFile = "etc/kbench/vm"

// vm returns the VMFile's lines below root, in order; none where the file
// is absent. Lines whose key does not start with "vm." are ignored, so the
// file cannot shadow the guest's own fields.
func (r reader) vm() []Field {
	s, err := r.read(VMFile)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return []Field{{"vm", missing(err)}}
	}
	var fields []Field
	for _, l := range strings.Split(s, "\n") {
		key, val, ok := strings.Cut(l, ": ")
		if ok && strings.HasPrefix(key, "vm.") && !strings.ContainsAny(key, " \t\r") {
			fields = append(fields, Field{key, clean(val)})
		}
	}
	return fields
}

// Process records the test binary's own settings that change results:
// who it runs as (root rows, stress-ng's root-only fd plan), its fd limit
// (sockfd's fds per connection), and the Go runtime's knobs.
func Process() []Field {
	return []Field{
		{"process.euid", strconv.Itoa(os.Geteuid())},
		{"process.rlimit_nofile", rlimitNofile()},
		{"go.gomaxprocs", gomaxprocs()},
		{"go.gogc", envOr("GOGC", "(unset: 100)")},
		{"go.godebug", envOr("GODEBUG", "(unset)")},
		// Who gives the benchmark threads their rseq area, whose
		// updates on every return to user space glibc programs pay.
		{"process.rseq", thread.Rseq()},
	}
}

func envOr(key, unset string) string {
	if v, ok := os.LookupEnv(key); ok {
		return v
	}
	return unset
}

func gomaxprocs() string {
	v := runtime.GOMAXPROCS(0)
	if env, ok := os.LookupEnv("GOMAXPROCS"); ok {
		return fmt.Sprintf("%d (GOMAXPROCS=%s)", v, env)
	}
	return fmt.Sprintf("%d (GOMAXPROCS unset; %d CPUs usable)", v, runtime.NumCPU())
}

// rlimitNofile is the process's RLIMIT_NOFILE. Go raises the soft limit to
// the hard one when a program starts (and restores it for children it
// starts), so the soft limit here is what the benchmarks get, not what
// the shell's ulimit -n says.
func rlimitNofile() string {
	var r unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &r); err != nil {
		return "(unreadable: " + err.Error() + ")"
	}
	return fmt.Sprintf("soft %s, hard %s", rlim(r.Cur), rlim(r.Max))
}

func rlim(v uint64) string {
	if v == unix.RLIM_INFINITY {
		return "unlimited"
	}
	return strconv.FormatUint(v, 10)
}

// firstLine is line of the first of rels that exists.
func (r reader) firstLine(rels ...string) string {
	v := "(missing)"
	for _, rel := range rels {
		if v = r.line(rel); v != "(missing)" {
			return v
		}
	}
	return v
}

// selected returns the bracketed choice of a sysfs selection file
// ("always [madvise] never" is "madvise"), or its content.
func (r reader) selected(rel string) string {
	s := r.line(rel)
	if i := strings.Index(s, "["); i >= 0 {
		if j := strings.Index(s[i:], "]"); j > 0 {
			return s[i+1 : i+j]
		}
	}
	return s
}

// boost says whether CPUs may run above their base frequency: the
// cpufreq boost switch (acpi-cpufreq, amd-pstate), or intel_pstate's
// no_turbo, inverted.
func (r reader) boost() string {
	if v := r.line("sys/devices/system/cpu/cpufreq/boost"); !strings.HasPrefix(v, "(") {
		return onOff(v == "1") + " (cpufreq/boost=" + v + ")"
	}
	if v := r.line("sys/devices/system/cpu/intel_pstate/no_turbo"); !strings.HasPrefix(v, "(") {
		return onOff(v == "0") + " (intel_pstate/no_turbo=" + v + ")"
	}
	paths, _ := filepath.Glob(filepath.Join(r.root, "sys/devices/system/cpu/cpufreq/policy[0-9]*/boost"))
	var vals []string
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if v := clean(string(data)); err == nil && !slices.Contains(vals, v) {
			vals = append(vals, v)
		}
	}
	if len(vals) > 0 {
		slices.Sort(vals)
		return "per policy: boost=" + strings.Join(vals, ", ")
	}
	return "(missing)"
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}

// x86LinkText is where an x86-64 kernel's _text sits when KASLR did not
// move it: __START_KERNEL_map plus the default CONFIG_PHYSICAL_START.
const x86LinkText = 0xffffffff81000000

// kaslr says whether the kernel's text was randomized this boot, and how
// that was found: nokaslr on the cmdline; else where /proc/kallsyms puts
// _text (readable as root unless kptr_restrict=2), against the x86-64
// link address; else the kernel's config (CONFIG_RANDOMIZE_BASE).
func (r reader) kaslr() string {
	cmdline, err := r.proc.Cmdline()
	if err != nil {
		return missing(err)
	}
	if slices.Contains(strings.Fields(cmdline), "nokaslr") {
		return "off (nokaslr on the cmdline)"
	}
	if addr, ok := r.textAddr(); ok && runtime.GOARCH == "amd64" {
		if addr == x86LinkText {
			return fmt.Sprintf("off (_text at the link address %x)", addr)
		}
		return fmt.Sprintf("on (_text at %x, not the link address %x)", addr, uint64(x86LinkText))
	}
	release, _ := r.proc.Sysctl("kernel.osrelease")
	if cfg, err := r.read("boot/config-" + release); err == nil && release != "" {
		for _, l := range strings.Split(cfg, "\n") {
			switch strings.TrimSpace(l) {
			case "CONFIG_RANDOMIZE_BASE=y":
				return "on (CONFIG_RANDOMIZE_BASE=y, no nokaslr on the cmdline)"
			case "# CONFIG_RANDOMIZE_BASE is not set":
				return "off (CONFIG_RANDOMIZE_BASE is not set)"
			}
		}
	}
	return "(unknown: no nokaslr on the cmdline; /proc/kallsyms hides addresses and no /boot/config-" + release + " says)"
}

// textAddr reads _text's address from /proc/kallsyms; false where the file
// is missing or shows zeros (kptr_restrict, or not root).
func (r reader) textAddr() (uint64, bool) {
	var addr uint64
	err := r.proc.Kallsyms(func(s procfs.Ksym) bool {
		if s.Name == "_text" {
			addr = s.Addr
			return false
		}
		return true
	})
	return addr, err == nil && addr != 0
}

// reader reads the files of a machine below root: its /proc through
// package procfs, the rest (/sys, /boot, /etc) itself.
type reader struct {
	root string
	proc procfs.FS
}

func newReader(root string) reader {
	return reader{root, procfs.FS{Dir: filepath.Join(root, "proc")}}
}

// sysctl returns a sysctl's value, or a note saying why there is none.
func (r reader) sysctl(name string) string { return value(r.proc.Sysctl(name)) }

// value is a file's content folded onto one line, or a note saying why
// there is none.
func value(s string, err error) string {
	if err != nil {
		return missing(err)
	}
	return clean(s)
}

func (r reader) read(rel string) (string, error) {
	data, err := os.ReadFile(filepath.Join(r.root, rel))
	return string(data), err
}

// line returns a one-line file's content, or a note saying why there is none.
func (r reader) line(rel string) string { return value(r.read(rel)) }

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
func cpuinfoField(cpuinfo *procfs.CPUInfo, err error, keys ...string) string {
	if err != nil {
		return missing(err)
	}
	for _, key := range keys {
		var vals []string
		for _, v := range cpuinfo.Values(key) {
			if !slices.Contains(vals, clean(v)) {
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

// Parse reads the fingerprint lines of a result file, in order, as
// Merged does.
func Parse(r io.Reader) ([]Field, error) {
	var m Merged
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		m.Add(sc.Text())
	}
	return m.Fields, sc.Err()
}

// Merged gathers the fingerprint lines of a result file, line by line
// (internal/abfile reads a file in one pass). A key seen again (one
// fingerprint per test binary) keeps its first value unless the values
// differ, in which case they are joined with " | " so a reader sees
// that the setup changed during the run.
type Merged struct {
	Fields []Field
	index  map[string]int
}

// Add takes one line of a result file and reports whether it was a
// fingerprint line ("# kbench key: value", the key without blanks),
// with the field it held.
func (m *Merged) Add(line string) (Field, bool) {
	rest, ok := strings.CutPrefix(line, Prefix)
	if !ok {
		return Field{}, false
	}
	key, val, ok := strings.Cut(rest, ": ")
	if !ok || key == "" || strings.ContainsAny(key, " \t") {
		return Field{}, false
	}
	f := Field{key, val}
	if i, seen := m.index[key]; seen {
		if !slices.Contains(strings.Split(m.Fields[i].Value, " | "), val) {
			m.Fields[i].Value += " | " + val
		}
		return f, true
	}
	if m.index == nil {
		m.index = map[string]int{}
	}
	m.index[key] = len(m.Fields)
	m.Fields = append(m.Fields, f)
	return f, true
}
