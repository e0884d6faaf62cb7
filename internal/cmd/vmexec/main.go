//go:build linux

// Command vmexec is a `go test -exec` wrapper that boots a kernel image
// in QEMU and runs the test binary there, one fresh boot per binary, so
// the suite measures another kernel than the host's:
//
//	go build -o /tmp/vmexec ./internal/cmd/vmexec
//	go test -exec '/tmp/vmexec -kernel /boot/vmlinuz-6.1.0-57-amd64' ./seccompbench
//
// The guest's root is an initramfs made for the run, with vmexec itself
// as /init; the binary's stdout, stderr and exit status come back framed
// on a second serial port, byte for byte, and each run's fingerprint gets
// vm.* lines. Bad input stops vmexec with a message (exit status 1, 2 for
// bad flags), never a hang, and QEMU never outlives it. docs/vms.md says
// what the guest holds, the kernel options it needs, how KVM, TCG and PVH
// boots are chosen and what each failure prints.
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
