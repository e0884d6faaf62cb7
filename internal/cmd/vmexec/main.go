//go:build linux

// Command vmexec is a `go test -exec` wrapper that boots a kernel image
// in QEMU and runs the test binary there, one fresh boot per binary:
//
//	go build -o /tmp/vmexec ./internal/cmd/vmexec
//	go test -exec '/tmp/vmexec -kernel /boot/vmlinuz-6.1.0-57-amd64' ./seccompbench
//	go test -exec 'vmexec -kernel PATH -append ARGS -smp N -memory SIZE -accel auto|kvm|tcg' ./...
//
// The guest's root is an initramfs made for the run (a newc cpio written
// with u-root's pkg/cpio): the test binary at its host path with its ELF
// loader and libraries, the module around the package directory go test
// runs it in (tests read ../../README.md; .git is left out), the
// host's redis-server, redis-benchmark, ip, and the sh, awk, sleep, cat,
// true and false of tests' scripts, with their libraries, the
// modules of -modules (veth) when the image has a modules tree beside it
// (Debian's DIR/boot/vmlinuz-V and DIR/lib/modules/V), and vmexec itself
// as /init. As PID 1 it mounts proc, sysfs, devtmpfs, tmpfs on /tmp, /run
// and /dev/shm, devpts, debugfs and tracefs where the kernel has them,
// brings up lo, loads the modules, applies vmexec's rlimits, environment
// (KBENCH_*, GO*, PATH, HOME), working directory and uid/gid, runs the
// binary, sends back the files it wrote for the user (go test's
// -test.*profile and -test.trace files, the KBENCH_PROFILE directory,
// GOCOVERDIR) and powers off; nothing else the guest wrote survives.
// Build vmexec with CGO_ENABLED=0 for a static
// init; a dynamically linked vmexec brings its own libraries along.
//
// The kernel console goes to ttyS0 and into a log file (named when a run
// fails); the binary's stdout, stderr and exit status come back framed on
// ttyS1, so vmexec's output is byte for byte what the binary printed and
// its exit status is the binary's (a binary killed by a signal kills
// vmexec with the same signal). Both ports are the 8250 UARTs every PC
// has, which need no module.
//
// Each run's fingerprint gets "vm.*" lines (internal/fingerprint reads
// them from /etc/kbench/vm in the guest): accelerator, vCPUs, memory,
// QEMU's version, the host's kernel and CPU, vCPU pinning, the boot time;
// the guest's own kernel.* lines (release, cmdline, boot id) are the
// guest's.
//
// -accel auto uses KVM when it boots the kernel: the first KVM boot of an
// image must print the kernel's first console line within -kvm-probe, or
// the run goes to TCG (-accel tcg,thread=multi -cpu max) with a warning
// on stderr and in the fingerprint; the verdict is cached per image hash
// in the user cache directory. Under TCG, timings measure emulation.
// With -pvh auto the vmlinux inside the image is extracted once (cached)
// and booted through its PVH entry when it has one (CONFIG_PVH): no
// real-mode setup or decompressor, seconds less per boot under TCG.
// With -pin auto each vCPU thread is pinned to a CPU vmexec may use, when
// there are as many; the fingerprint says which, or why not.
//
// Kernel options the guest needs, checked in the config beside the image
// (config-V beside vmlinuz-V, or a build tree's .config) and again by the
// init, which names the option behind a failed mount: CONFIG_BLK_DEV_INITRD,
// CONFIG_BINFMT_ELF, CONFIG_PROC_FS, CONFIG_SYSFS, CONFIG_DEVTMPFS,
// CONFIG_TMPFS, CONFIG_SERIAL_8250, CONFIG_SERIAL_8250_CONSOLE, CONFIG_TTY,
// CONFIG_PRINTK. Wanted (rows skip or a mount is missing without them):
// CONFIG_DEBUG_FS, CONFIG_TRACING, CONFIG_NET, CONFIG_INET, CONFIG_UNIX,
// CONFIG_NET_NS, CONFIG_VETH, CONFIG_MODULES, CONFIG_SECCOMP, CONFIG_BPF_JIT,
// CONFIG_PERF_EVENTS, CONFIG_ACPI (power-off). See docs/vms.md.
//
// Bad input stops vmexec with a message and exit status 1 (2 for bad
// flags), never a hang: no QEMU, a missing or non-kernel image, a kernel
// that does not reach init within -boot-timeout (its last console lines
// and the log's path are printed), a guest panic (panic=-1 and
// -no-reboot end QEMU at once), -timeout. QEMU never outlives vmexec: it
// gets SIGKILL when vmexec dies (PR_SET_PDEATHSIG), and SIGINT, SIGTERM
// and SIGHUP kill it before vmexec exits by the same signal. SIGQUIT (go
// test's own timeout) is passed to the binary in the guest, so it prints
// its goroutines as on a host.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

func main() {
	if os.Getpid() == 1 {
		guestMain()
	}
	cfg, err := parseFlags(os.Args[1:], os.Stderr)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(os.Stderr, "vmexec: %v\n", err)
		}
		os.Exit(2)
	}
	if skipBoot(cfg) { // nothing.go: no guest for a binary with nothing to run
		os.Exit(0)
	}
	st, sig, err := run(cfg)
	if sig != 0 {
		dieBySignal(sig)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "vmexec: %v\n", err)
		os.Exit(1)
	}
	if st.Err != "" {
		fmt.Fprintf(os.Stderr, "vmexec: the guest's init could not run %s: %s\n", cfg.args[0], st.Err)
		os.Exit(1)
	}
	if st.Signal != 0 {
		dieBySignal(syscall.Signal(st.Signal))
	}
	os.Exit(st.Code)
}

// dieBySignal ends vmexec by sig with its default action, so that go test
// reports "signal: killed" (or whichever) as for a binary run on the host.
func dieBySignal(sig syscall.Signal) {
	os.Stdout.Sync()
	unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{}) // no core of vmexec
	// SIG_DFL is an all-zero struct sigaction on every Linux ABI.
	var act [4]uint64
	unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&act)), 0, 8, 0, 0)
	var set unix.Sigset_t
	set.Val[0] = 1 << (uint(sig) - 1)
	unix.PthreadSigmask(unix.SIG_UNBLOCK, &set, nil)
	unix.Tgkill(unix.Getpid(), unix.Gettid(), sig)
	time.Sleep(time.Second)
	os.Exit(128 + int(sig))
}

// host is one vmexec run on the host.
type host struct {
	cfg      *config
	qemu     string // QEMU's path
	tmp      string // the run's scratch directory
	initrd   string
	log      io.Writer // the console log
	logPath  string
	keepLog  bool
	accel    string   // of the boot under way
	image    string   // what QEMU boots: -kernel, or its vmlinux (PVH)
	outputs  []string // what the binary writes for the user, sent back
	bootTime time.Duration
}
