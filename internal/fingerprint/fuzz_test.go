//go:build linux

package fingerprint

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzCollect reads a machine whose files the fuzzer writes: the
// cmdline, release, cpuinfo, kallsyms, the VM file, a sysfs selection
// file and the kernel's config, the outside text Collect parses. The
// property: no panic, and every field a key without blanks and a value
// on one line (a file it cannot use is recorded as such, never an error);
// a VM file's lines are vm.* fields only, at most one per line of it.
func FuzzCollect(f *testing.F) {
	read := func(path string) []byte {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		return data
	}
	machine := "testdata/machine/"
	host := "../procfs/testdata/host/"
	f.Add(read(machine+"proc/cmdline"), read(machine+"proc/sys/kernel/osrelease"), read(machine+"proc/cpuinfo"),
		read(machine+"proc/kallsyms"), read("testdata/vm/"+VMFile), read(machine+"sys/kernel/mm/transparent_hugepage/enabled"),
		[]byte("CONFIG_RANDOMIZE_BASE=y\n"))
	// This machine's kallsyms, cut to its first lines (_text is the
	// third): the fuzzer minimizes what it finds, and 120000 lines
	// would keep it at that.
	kallsyms := read(host + "kallsyms")
	kallsyms = kallsyms[:bytes.IndexByte(kallsyms[1000:], '\n')+1001]
	f.Add(read(host+"cmdline"), read(host+"sys/kernel/osrelease"), read(host+"cpuinfo"),
		kallsyms, []byte(""), []byte("always [madvise] never\n"), []byte("# CONFIG_RANDOMIZE_BASE is not set\n"))
	// One tree for every input, its files rewritten each time: a tree
	// made and removed per input makes the disk, not Collect, the work.
	root := f.TempDir()
	f.Fuzz(func(t *testing.T, cmdline, release, cpuinfo, kallsyms, vm, thp, config []byte) {
		if err := os.RemoveAll(filepath.Join(root, "boot")); err != nil {
			t.Fatal(err)
		}
		files := map[string][]byte{
			"proc/cmdline": cmdline, "proc/sys/kernel/osrelease": release, "proc/cpuinfo": cpuinfo,
			"proc/kallsyms": kallsyms, VMFile: vm, "sys/kernel/mm/transparent_hugepage/enabled": thp,
		}
		// The config is found by the release's name: only a name that
		// stays a file in boot/ is written, and only one the file system
		// can hold (NAME_MAX, 255 bytes); Collect still reads a longer
		// one, and must record it as unknown.
		if r := clean(string(release)); r != "" && r != "." && r != ".." && !strings.ContainsAny(r, "/\x00") && len("config-"+r) <= 255 {
			files["boot/config-"+r] = config
		}
		for rel, data := range files {
			path := filepath.Join(root, rel)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		vmLines := strings.Count(string(vm), "\n") + 1
		for _, fl := range Collect(root) {
			if fl.Key == "" || strings.ContainsAny(fl.Key, " \t\n") {
				t.Fatalf("key %q", fl.Key)
			}
			if strings.ContainsAny(fl.Value, "\n\r") && fl.Key != "go.godebug" {
				t.Fatalf("%s: value %q is not one line", fl.Key, fl.Value)
			}
			if strings.HasPrefix(fl.Key, "vm.") {
				if vmLines--; vmLines < 0 {
					t.Fatalf("more vm fields than the VM file's lines")
				}
			}
		}
	})
}
