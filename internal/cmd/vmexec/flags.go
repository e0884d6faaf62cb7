//go:build linux

package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kbench/kbench/internal/vmflags"
)

// config is vmexec's command line.
type config struct {
	kernel, append, tcgAppend string
	smp                       int
	memory, accel, pin, pvh   string
	console, qemu, outcome    string
	modules                   []string
	bootTimeout, stall        time.Duration
	kvmProbe                  time.Duration
	args                      []string // the test binary and its arguments
}

// parseFlags reads vmexec's flags; the first non-flag argument is the
// program, which gets the rest.
func parseFlags(args []string, stderr io.Writer) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("vmexec", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.kernel, "kernel", "", "kernel image (bzImage, /boot/vmlinuz-*) to boot (required)")
	fs.StringVar(&c.append, "append", "", "more kernel command line, after vmexec's own (console=ttyS0 panic=-1 ...)")
	// docs/vms.md, "Boots that die under TCG", says why.
	fs.StringVar(&c.tcgAppend, "tcg-append", "tsc=unstable no_timer_check", "more kernel command line for TCG boots only ('' for none)")
	smp := fs.String("smp", strconv.Itoa(vmflags.DefaultSMP), "vCPUs (1-"+strconv.Itoa(vmflags.MaxSMP)+")")
	fs.StringVar(&c.memory, "memory", vmflags.DefaultMemory, "guest memory, as NM or NG")
	fs.StringVar(&c.accel, "accel", vmflags.DefaultAccel, "auto (KVM when it boots this kernel, else TCG), kvm or tcg")
	fs.DurationVar(&c.bootTimeout, "boot-timeout", 5*time.Minute, "how long the kernel may take to reach init")
	fs.DurationVar(&c.kvmProbe, "kvm-probe", 15*time.Second, "with -accel auto: how long a KVM boot may stay silent before TCG is used")
	fs.StringVar(&c.pin, "pin", "auto", "auto (pin vCPU i to the i-th CPU vmexec may use, when there are enough) or off")
	fs.StringVar(&c.pvh, "pvh", "auto", "auto (boot the image's vmlinux through its PVH entry when it has one: no decompressor, seconds faster under TCG) or off (boot the bzImage)")
	modules := fs.String("modules", "veth", "comma-separated kernel modules to load in this order, dependencies first, when the image's modules tree is found ('' for none)")
	fs.StringVar(&c.console, "console", "", "write the kernel console here (default: a temporary file, kept and named when the run fails)")
	fs.StringVar(&c.qemu, "qemu", "qemu-system-x86_64", "the QEMU system emulator")
	fs.StringVar(&c.outcome, "outcome", "", "append how the run ended to this `file`, as one JSON line (vmflags.Outcome): for callers of go test -exec, which report every failure as exit status 1")
	fs.DurationVar(&c.stall, "stall", defaultStall, "kill a guest that sends no byte at all (console, the binary's output, init's heartbeat every "+beatEvery.String()+") for this long, as frozen (0: no guard)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: vmexec -kernel IMAGE [flags] program [args...]\n\nas go test -exec 'vmexec -kernel IMAGE' ...; flags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	c.args = fs.Args()
	switch {
	case c.kernel == "":
		return nil, fmt.Errorf("-kernel is required: a kernel image such as /boot/vmlinuz-$(uname -r) or arch/x86/boot/bzImage")
	case len(c.args) == 0:
		return nil, fmt.Errorf("no program to run: vmexec -kernel IMAGE [flags] program [args...]")
	case c.bootTimeout <= 0 || c.kvmProbe <= 0:
		return nil, fmt.Errorf("-boot-timeout and -kvm-probe accept more than 0")
	case c.stall != 0 && c.stall < 4*beatEvery:
		return nil, fmt.Errorf("-stall accepts 0 (no guard) or at least %v, four of init's heartbeats (got %v)", 4*beatEvery, c.stall)
	}
	// kbab checks what it passes through by the same rules; -tcg-append
	// shares vmflags.Reserved with OwnCmdline, each after a space.
	for _, err := range []error{relativeKernel(c.kernel), vmflags.Check(*smp, c.memory, c.accel),
		vmflags.Append("-append", c.append, vmflags.MaxAppend),
		vmflags.Append("-tcg-append", c.tcgAppend, vmflags.Reserved-len(vmflags.OwnCmdline)-2),
		vmflags.OneOf("-pin", c.pin, "auto", "off"), vmflags.OneOf("-pvh", c.pvh, "auto", "off")} {
		if err != nil {
			return nil, err
		}
	}
	c.smp, _ = strconv.Atoi(*smp)
	c.modules = strings.FieldsFunc(*modules, func(r rune) bool { return r == ',' || r == ' ' })
	return c, nil
}

// relativeKernel refuses a relative -kernel that names no file: go test
// -exec runs vmexec in each package's directory. The error gives the
// first directory up from there that holds the path, when one does.
func relativeKernel(kernel string) error {
	if filepath.IsAbs(kernel) || exists(kernel) {
		return nil
	}
	cwd, _ := os.Getwd()
	why := fmt.Sprintf("-kernel %s: no such file in %s, where vmexec runs: go test -exec runs it in each package's directory, so a relative path names a file there; ", kernel, cwd)
	for dir := cwd; dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		if p := filepath.Join(filepath.Dir(dir), kernel); exists(p) {
			return fmt.Errorf("%sgive the absolute path: -kernel %s", why, p)
		}
	}
	return fmt.Errorf("%sgive an absolute path, such as -kernel \"$(pwd)/%s\" where the path is relative to", why, kernel)
}
