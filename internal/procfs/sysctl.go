//go:build linux

package procfs

import (
	"os"
	"strconv"
	"strings"
)

// SysctlPath is the file of sysctl name ("kernel.perf_event_paranoid",
// as sysctl(8) spells it) below the mount's sys directory.
func (fs FS) SysctlPath(name string) string {
	return fs.Path("sys/" + strings.ReplaceAll(name, ".", "/"))
}

// Sysctl reads sysctl name, folded onto one line (a multi-line value,
// such as kernel.version's, keeps its words). A missing or unreadable
// one is the *fs.PathError of the read.
func (fs FS) Sysctl(name string) (string, error) {
	data, err := os.ReadFile(fs.SysctlPath(name))
	if err != nil {
		return "", err
	}
	return strings.Join(strings.Fields(string(data)), " "), nil
}

// SysctlInt reads an integer sysctl.
func (fs FS) SysctlInt(name string) (int, error) {
	v, err := fs.Sysctl(name)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, syntaxError(fs.SysctlPath(name), 1, "an integer", v)
	}
	return n, nil
}

// BootID is kernel.random.boot_id: a random id the kernel draws at each
// boot, which ties a result to the boot it was measured in.
func (fs FS) BootID() (string, error) { return fs.Sysctl("kernel.random.boot_id") }

// Cmdline reads the kernel's command line as the boot loader gave it.
func (fs FS) Cmdline() (string, error) {
	data, err := os.ReadFile(fs.Path("cmdline"))
	return string(data), err
}
