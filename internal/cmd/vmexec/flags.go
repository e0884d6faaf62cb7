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
	kernel      string
	append      string
	tcgAppend   string // tcg.go
	smp         int
	memory      string
	accel       string
	timeout     time.Duration
	bootTimeout time.Duration
	kvmProbe    time.Duration
	pin         string
	pvh         string
	modules     []string
	console     string
	qemu        string
	outcome     string
	stall       time.Duration
	args        []string // the test binary and its arguments
}

// parseFlags reads vmexec's flags; the first non-flag argument is the
// program, which gets the rest.
func parseFlags(args []string, stderr io.Writer) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("vmexec", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.kernel, "kernel", "", "kernel image (bzImage, /boot/vmlinuz-*) to boot (required)")
	fs.StringVar(&c.append, "append", "", "more kernel command line, after vmexec's own (console=ttyS0 panic=-1 ...)")
	fs.StringVar(&c.tcgAppend, "tcg-append", tcgAppendDefault, "more kernel command line for TCG boots only ('' for none; see tcg.go)")
	smp := fs.String("smp", strconv.Itoa(vmflags.DefaultSMP), "vCPUs (1-"+strconv.Itoa(vmflags.MaxSMP)+")")
	fs.StringVar(&c.memory, "memory", vmflags.DefaultMemory, "guest memory, as NM or NG")
	fs.StringVar(&c.accel, "accel", vmflags.DefaultAccel, "auto (KVM when it boots this kernel, else TCG), kvm or tcg")
	fs.DurationVar(&c.timeout, "timeout", 0, "kill the guest after this long (0: no limit beyond the binary's own -test.timeout)")
	fs.DurationVar(&c.bootTimeout, "boot-timeout", 5*time.Minute, "how long the kernel may take to reach init")
	fs.DurationVar(&c.kvmProbe, "kvm-probe", 15*time.Second, "with -accel auto: how long a KVM boot may stay silent before TCG is used")
	fs.StringVar(&c.pin, "pin", "auto", "auto (pin vCPU i to the i-th CPU vmexec may use, when there are enough) or off")
	fs.StringVar(&c.pvh, "pvh", "auto", "auto (boot the image's vmlinux through its PVH entry when it has one: no decompressor, seconds faster under TCG) or off (boot the bzImage)")
	modules := fs.String("modules", "veth", "comma-separated kernel modules to load when the image's modules tree is found ('' for none)")
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
	}
	if err := relativeKernel(c.kernel); err != nil {
		return nil, err
	}
	// The settings kbab passes through, checked by the rules kbab uses.
	if err := (vmflags.Guest{SMP: *smp, Memory: c.memory, Accel: c.accel, Append: c.append}).Check(); err != nil {
		return nil, err
	}
	// -tcg-append shares vmexec's part of the command line with its own
	// arguments (vmflags.Reserved), each after a space.
	if err := vmflags.AppendAs("-tcg-append", c.tcgAppend, vmflags.Reserved-len(vmflags.OwnCmdline)-2); err != nil {
		return nil, err
	}
	c.smp, _ = strconv.Atoi(*smp)
	switch {
	case c.pin != "auto" && c.pin != "off":
		return nil, fmt.Errorf("-pin accepts auto or off (got %q)", c.pin)
	case c.pvh != "auto" && c.pvh != "off":
		return nil, fmt.Errorf("-pvh accepts auto or off (got %q)", c.pvh)
	case c.timeout < 0 || c.bootTimeout <= 0 || c.kvmProbe <= 0:
		return nil, fmt.Errorf("-timeout accepts 0 or more, -boot-timeout and -kvm-probe more than 0")
	case c.stall != 0 && c.stall < 4*beatEvery:
		return nil, fmt.Errorf("-stall accepts 0 (no guard) or at least %v, four of init's heartbeats (got %v)", 4*beatEvery, c.stall)
	}
	for _, m := range strings.Split(*modules, ",") {
		if m = strings.TrimSpace(m); m != "" {
			c.modules = append(c.modules, m)
		}
	}
	return c, nil
}

// relativeKernel refuses a relative -kernel that names no file: go test
// -exec runs vmexec in each package's directory, so a path relative to
// the directory go test was run in names nothing there. The error gives
// the absolute path to try: the first directory up from here that holds
// the path, else the module's root (go.mod), else this directory.
func relativeKernel(kernel string) error {
	if filepath.IsAbs(kernel) || exists(kernel) {
		return nil
	}
	cwd, err := os.Getwd()
	if err != nil {
		return fmt.Errorf("-kernel %s: a relative path, and the working directory is unknown: %v", kernel, err)
	}
	try, found, module := "", false, ""
	for dir := cwd; ; dir = filepath.Dir(dir) {
		if p := filepath.Join(dir, kernel); !found && exists(p) {
			try, found = p, true
		}
		if module == "" && exists(filepath.Join(dir, "go.mod")) {
			module = dir
		}
		if dir == filepath.Dir(dir) {
			break
		}
	}
	why := fmt.Sprintf("-kernel %s: no such file in %s, where vmexec runs: go test -exec runs it in each package's directory, so a relative path names a file there; ", kernel, cwd)
	switch {
	case found:
		return fmt.Errorf("%sgive the absolute path: -kernel %s", why, try)
	case module != "":
		return fmt.Errorf("%sgive an absolute path, such as -kernel \"$(pwd)/%s\" where the path is relative to (%s, from the module's root, does not exist either)", why, kernel, filepath.Join(module, kernel))
	}
	return fmt.Errorf("%sgive an absolute path, such as -kernel \"$(pwd)/%s\" where the path is relative to", why, kernel)
}
