//go:build linux

// Command vmexec is a `go test -exec` wrapper that runs each test binary
// as the only program of a fresh QEMU guest booted from a kernel image,
// so that the suite measures that kernel on a machine nobody reboots. The
// binary's output, exit status and output files come back as if it had
// run on the host:
//
//	go build -o /tmp/vmexec ./internal/cmd/vmexec
//	go test -exec '/tmp/vmexec -kernel /boot/vmlinuz-6.1.0-57-amd64' ./seccompbench
//
// vmexec is also the guest's init (PID 1): build it with CGO_ENABLED=0
// for a static one. docs/vms.md says what the guest holds, the kernel
// options it needs, how the accelerator is chosen, what a VM changes next
// to bare metal, and how each failure ends: a message and exit status 1 (2
// for a bad flag), never a hang, and no QEMU left behind.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
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
	// SIGINT, SIGTERM and SIGHUP end the guest, then vmexec by the same
	// signal; SIGQUIT (go test's own timeout) goes to the binary.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	st, sig, err := run(cfg, runEnv{stdout: os.Stdout, stderr: os.Stderr, signals: sigs, kvmDevice: "/dev/kvm", grace: defaultGraces})
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
