//go:build linux

package main

import (
	"flag"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"
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
	args        []string // the test binary and its arguments
}

var memoryRE = regexp.MustCompile(`^[1-9][0-9]*[MG]$`)

// parseFlags reads vmexec's flags; the first non-flag argument is the
// program, which gets the rest.
func parseFlags(args []string, stderr io.Writer) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("vmexec", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.kernel, "kernel", "", "kernel image (bzImage, /boot/vmlinuz-*) to boot (required)")
	fs.StringVar(&c.append, "append", "", "more kernel command line, after vmexec's own (console=ttyS0 panic=-1 ...)")
	fs.StringVar(&c.tcgAppend, "tcg-append", tcgAppendDefault, "more kernel command line for TCG boots only ('' for none; see tcg.go)")
	fs.IntVar(&c.smp, "smp", 2, "vCPUs (1-256)")
	fs.StringVar(&c.memory, "memory", "2G", "guest memory, as NM or NG")
	fs.StringVar(&c.accel, "accel", "auto", "auto (KVM when it boots this kernel, else TCG), kvm or tcg")
	fs.DurationVar(&c.timeout, "timeout", 0, "kill the guest after this long (0: no limit beyond the binary's own -test.timeout)")
	fs.DurationVar(&c.bootTimeout, "boot-timeout", 5*time.Minute, "how long the kernel may take to reach init")
	fs.DurationVar(&c.kvmProbe, "kvm-probe", 15*time.Second, "with -accel auto: how long a KVM boot may stay silent before TCG is used")
	fs.StringVar(&c.pin, "pin", "auto", "auto (pin vCPU i to the i-th CPU vmexec may use, when there are enough) or off")
	fs.StringVar(&c.pvh, "pvh", "auto", "auto (boot the image's vmlinux through its PVH entry when it has one: no decompressor, seconds faster under TCG) or off (boot the bzImage)")
	modules := fs.String("modules", "veth", "comma-separated kernel modules to load when the image's modules tree is found ('' for none)")
	fs.StringVar(&c.console, "console", "", "write the kernel console here (default: a temporary file, kept and named when the run fails)")
	fs.StringVar(&c.qemu, "qemu", "qemu-system-x86_64", "the QEMU system emulator")
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
	case c.smp < 1 || c.smp > 256:
		return nil, fmt.Errorf("-smp accepts 1-256 (got %d)", c.smp)
	case !memoryRE.MatchString(c.memory):
		return nil, fmt.Errorf("-memory accepts a size such as 512M or 2G (got %q)", c.memory)
	case c.accel != "auto" && c.accel != "kvm" && c.accel != "tcg":
		return nil, fmt.Errorf("-accel accepts auto, kvm or tcg (got %q)", c.accel)
	case c.pin != "auto" && c.pin != "off":
		return nil, fmt.Errorf("-pin accepts auto or off (got %q)", c.pin)
	case c.pvh != "auto" && c.pvh != "off":
		return nil, fmt.Errorf("-pvh accepts auto or off (got %q)", c.pvh)
	case c.timeout < 0 || c.bootTimeout <= 0 || c.kvmProbe <= 0:
		return nil, fmt.Errorf("-timeout accepts 0 or more, -boot-timeout and -kvm-probe more than 0")
	}
	if mb := memoryMiB(c.memory); mb < 128 {
		return nil, fmt.Errorf("-memory %s: a guest needs at least 128M", c.memory)
	}
	for _, m := range strings.Split(*modules, ",") {
		if m = strings.TrimSpace(m); m != "" {
			c.modules = append(c.modules, m)
		}
	}
	return c, nil
}

func memoryMiB(s string) int {
	n, _ := strconv.Atoi(s[:len(s)-1])
	if strings.HasSuffix(s, "G") {
		n *= 1024
	}
	return n
}
