//go:build linux

package fingerprint

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"
)

func lookup(fields []Field, key string) (string, bool) {
	for _, f := range fields {
		if f.Key == key {
			return f.Value, true
		}
	}
	return "", false
}

func TestCollectFixture(t *testing.T) {
	fields := Collect("testdata/machine")
	for key, want := range map[string]string{
		"kernel.release":                 "6.18.44-fc-v857",
		"kernel.version":                 "(missing)",
		"kernel.boot_id":                 "0f2e3c9a-6a54-4d3e-9a8e-6a1c2b7d4e51",
		"kernel.cmdline":                 "BOOT_IMAGE=/vmlinuz root=/dev/vda ro spectre_v2_user=on",
		"cpu.model":                      "Intel(R) Core(TM) i7-12700KF",
		"cpu.microcode":                  "0x3e",
		"cpu.online":                     "0-2",
		"cpu.smt.active":                 "1",
		"cpu.smt.control":                "on",
		"cpufreq.governor":               "performance (0-1), powersave (2)",
		"vuln.spectre_v2":                "Mitigation: Enhanced / Automatic IBRS; IBPB: conditional; RSB filling",
		"vuln.meltdown":                  "Not affected",
		"sysctl.net.core.bpf_jit_enable": "1",
		"sysctl.net.core.bpf_jit_harden": "(missing)",
		"kernel.kaslr":                   "on (_text at ffffffff9b200000, not the link address ffffffff81000000)",
		"cpufreq.boost":                  "on (intel_pstate/no_turbo=0)",
		"cpuidle.driver":                 "intel_idle",
		"cpuidle.governor":               "menu", // current_governor_ro: kernels before 5.x's switchable governors
		"thp.enabled":                    "madvise",
		"thp.defrag":                     "madvise",
	} {
		got, ok := lookup(fields, key)
		if !ok || got != want {
			t.Errorf("%s = %q (present %v), want %q", key, got, ok, want)
		}
	}
}

func TestCollectEmptyRoot(t *testing.T) {
	// Nothing readable at all: every field says so, nothing fails.
	for _, f := range Collect(t.TempDir()) {
		if strings.HasPrefix(f.Key, "go.") || strings.HasPrefix(f.Key, "process.") {
			continue // the process's own facts
		}
		if !strings.HasPrefix(f.Value, "(missing") {
			t.Errorf("%s = %q on an empty root", f.Key, f.Value)
		}
	}
}

// TestKASLR checks each way kernel.kaslr is decided, and that a machine
// that says nothing gives a note, not a guess.
func TestKASLR(t *testing.T) {
	write := func(root, rel, data string) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"nokaslr", map[string]string{"proc/cmdline": "ro nokaslr quiet\n", "proc/kallsyms": "ffffffff9b200000 T _text\n"}, "off (nokaslr on the cmdline)"},
		{"link address", map[string]string{"proc/cmdline": "ro\n", "proc/kallsyms": "ffffffff81000000 T _text\n"}, "off (_text at the link address ffffffff81000000)"},
		{"hidden, config y", map[string]string{"proc/cmdline": "ro\n", "proc/kallsyms": "0000000000000000 T _text\n",
			"proc/sys/kernel/osrelease": "6.1.0\n", "boot/config-6.1.0": "CONFIG_X=y\nCONFIG_RANDOMIZE_BASE=y\n"}, "on (CONFIG_RANDOMIZE_BASE=y, no nokaslr on the cmdline)"},
		{"config off", map[string]string{"proc/cmdline": "ro\n", "proc/sys/kernel/osrelease": "5.4.0\n",
			"boot/config-5.4.0": "# CONFIG_RANDOMIZE_BASE is not set\n"}, "off (CONFIG_RANDOMIZE_BASE is not set)"},
		{"nothing says", map[string]string{"proc/cmdline": "ro\n", "proc/sys/kernel/osrelease": "5.4.0\n"}, "(unknown: no nokaslr on the cmdline"},
	} {
		if runtime.GOARCH != "amd64" && strings.Contains(c.want, "_text") {
			continue
		}
		root := t.TempDir()
		for rel, data := range c.files {
			write(root, rel, data)
		}
		if got := newReader(root).kaslr(); !strings.HasPrefix(got, c.want) {
			t.Errorf("%s: kernel.kaslr = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestCollectLiveMachine(t *testing.T) {
	fields := Collect("/")
	if v, _ := lookup(fields, "kernel.release"); strings.HasPrefix(v, "(") {
		t.Fatalf("kernel.release unreadable on this machine: %q", v)
	}
}

func TestWriteParseRoundTrip(t *testing.T) {
	in := []Field{{"kernel.release", "6.1.0"}, {"kernel.cmdline", "a=b  c"}}
	var buf bytes.Buffer
	if err := Write(&buf, in); err != nil {
		t.Fatal(err)
	}
	// A second test binary of the same run prints the same fingerprint,
	// except for a value that changed in between.
	buf.WriteString("BenchmarkX 1 2 ns/op\n# kbench kernel.release: 6.1.0\n# kbench kernel.cmdline: x\n")
	out, err := Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 || out[0] != (Field{"kernel.release", "6.1.0"}) || out[1] != (Field{"kernel.cmdline", "a=b c | x"}) {
		t.Fatalf("Parse = %q", out)
	}
}

// TestNotConfiguration checks that benchfmt sees no configuration in the
// fingerprint, so benchstat never splits a comparison over it.
func TestNotConfiguration(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, Collect("testdata/machine")); err != nil {
		t.Fatal(err)
	}
	buf.WriteString("BenchmarkX 1 2 ns/op\n")
	r := benchfmt.NewReader(&buf, "fixture")
	var n int
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.Result:
			n++
			if len(rec.Config) != 0 {
				t.Errorf("benchfmt read configuration from the fingerprint: %+v", rec.Config)
			}
		case *benchfmt.SyntaxError:
			t.Errorf("syntax error: %v", rec)
		}
	}
	if n != 1 {
		t.Fatalf("read %d results, want 1", n)
	}
}

func TestFormatCPUList(t *testing.T) {
	for want, in := range map[string][]int{"0-3": {0, 1, 2, 3}, "0,2,4-5": {0, 2, 4, 5}, "7": {7}} {
		if got := FormatCPUList(in); got != want {
			t.Errorf("FormatCPUList(%v) = %q, want %q", in, got, want)
		}
	}
}

func TestCollectVM(t *testing.T) {
	fields := Collect("testdata/vm")
	var vm []string
	for _, f := range fields {
		if strings.HasPrefix(f.Key, "vm") {
			vm = append(vm, f.Key+": "+f.Value)
		}
	}
	want := []string{
		"vm.accel: tcg (KVM did not boot this kernel)",
		"vm.vcpus: 2",
		"vm.pinning: not pinned (2 vCPUs, 1 host CPU allowed)",
	}
	if strings.Join(vm, "\n") != strings.Join(want, "\n") {
		t.Errorf("vm fields:\n%s\nwant:\n%s", strings.Join(vm, "\n"), strings.Join(want, "\n"))
	}
	if v, _ := lookup(fields, "kernel.release"); v != "(missing)" {
		t.Errorf("the VM file shadowed kernel.release: %q", v)
	}
	for _, f := range Collect("testdata/machine") {
		if strings.HasPrefix(f.Key, "vm") {
			t.Errorf("bare-metal fixture got a VM field %s: %s", f.Key, f.Value)
		}
	}
}
