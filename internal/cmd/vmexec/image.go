//go:build linux

package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kbench/kbench/internal/vmflags"
)

func checkImage(path string) error { return vmflags.Kernel("-kernel", path) }

// requiredOptions are the kernel options a guest cannot run without;
// wantedOptions are ones some rows need (docs/vms.md, "Kernel options").
var (
	requiredOptions = []string{"BLK_DEV_INITRD", "BINFMT_ELF", "PROC_FS", "SYSFS", "DEVTMPFS", "TMPFS", "SERIAL_8250", "SERIAL_8250_CONSOLE", "TTY", "PRINTK"}
	wantedOptions   = []string{"DEBUG_FS", "TRACING", "NET", "INET", "UNIX", "NET_NS", "VETH", "MODULES", "SECCOMP", "BPF_JIT", "PERF_EVENTS", "ACPI"}
)

// configFor finds the kernel config that comes with an image: config-V
// beside vmlinuz-V (Debian's /boot), or .config at the top of the build
// tree of arch/x86/boot/bzImage; "" when there is none.
func configFor(image string) string {
	dir, base := filepath.Split(image)
	if v, ok := strings.CutPrefix(base, "vmlinuz-"); ok && exists(filepath.Join(dir, "config-"+v)) {
		return filepath.Join(dir, "config-"+v)
	}
	if tree, ok := strings.CutSuffix(filepath.Clean(dir), filepath.Join("arch", "x86", "boot")); ok && exists(filepath.Join(tree, ".config")) {
		return filepath.Join(tree, ".config")
	}
	return ""
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// checkConfig reads a kernel config and names the required options it
// lacks (an error) and the wanted ones it lacks (warnings).
func checkConfig(path string) (missingWanted []string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	set := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok && strings.HasPrefix(k, "CONFIG_") {
			set[strings.TrimPrefix(k, "CONFIG_")] = v
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	var missing []string
	for _, o := range requiredOptions {
		if set[o] != "y" {
			missing = append(missing, "CONFIG_"+o+"=y")
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("kernel config %s lacks %s, which a vmexec guest needs", path, strings.Join(missing, ", "))
	}
	for _, o := range wantedOptions {
		if v := set[o]; v != "y" && !(o == "VETH" && v == "m") {
			missingWanted = append(missingWanted, "CONFIG_"+o)
		}
	}
	return missingWanted, nil
}

// modulesFor finds the modules tree of an image in Debian's layout,
// DIR/boot/vmlinuz-V beside DIR/lib/modules/V, or DIR/usr/lib/modules/V
// as trixie's packages unpack; "" when there is none.
func modulesFor(image string) (dir, release string) {
	bootDir, base := filepath.Split(filepath.Clean(image))
	v, ok := strings.CutPrefix(base, "vmlinuz-")
	if !ok || filepath.Base(filepath.Clean(bootDir)) != "boot" {
		return "", ""
	}
	for _, lib := range []string{"lib", "usr/lib"} {
		if d := filepath.Join(filepath.Dir(filepath.Clean(bootDir)), lib, "modules", v); exists(d) {
			return d, v
		}
	}
	return "", ""
}
