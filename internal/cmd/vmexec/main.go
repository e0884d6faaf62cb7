//go:build linux

// Command vmexec is a `go test -exec` wrapper that runs each test binary
// as the only program of a fresh QEMU guest booted from a kernel image;
// the binary's output, exit status and output files come back as if it
// had run on the host (docs/vms.md):
//
//	go test -exec '/tmp/vmexec -kernel /boot/vmlinuz-6.1.0-57-amd64' ./seccompbench
//
// vmexec is also the guest's init (PID 1). A run ends with the binary's
// exit status or one of vmexec's (package vmflags), never a hang, with no
// QEMU left behind.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"github.com/kbench/kbench/internal/vmflags"
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
		os.Exit(vmflags.ExitFlags)
	}
	// No guest for a binary with nothing to run (docs/vms.md, "Nothing to
	// run, no boot"), when -kernel is a kernel image (a bad one is the
	// boot's to report): what the binary would print then.
	if stdout, stderr, nothing := nothingToRun(cfg.args); nothing && checkImage(cfg.kernel) == nil {
		os.Stderr.WriteString(stderr)
		os.Stdout.WriteString(stdout)
		os.Exit(0)
	}
	// SIGINT, SIGTERM, SIGHUP and SIGQUIT (go test's backstop, a minute
	// after the binary's own -test.timeout) end the guest, then vmexec by
	// the same signal.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	st, sig, err := run(cfg, runEnv{stdout: os.Stdout, stderr: os.Stderr, signals: sigs, kvmDevice: "/dev/kvm", grace: defaultGraces})
	o := vmflags.Outcome{Program: cfg.args[0]}
	o.Dir, _ = os.Getwd()
	switch {
	case sig != 0:
		o.Status, o.Outcome, o.Why = 128+int(sig), "signal", "vmexec was interrupted by "+sig.String()
	case err != nil:
		fmt.Fprintf(os.Stderr, "vmexec: %v\n", err)
		o.Status, o.Why = statusOf(err), err.Error()
	case st.Err != "":
		o.Status, o.Why = vmflags.ExitFailed, "the guest's init could not run "+cfg.args[0]+": "+st.Err
		fmt.Fprintf(os.Stderr, "vmexec: %s\n", o.Why)
	case st.Signal != 0:
		sig = syscall.Signal(st.Signal)
		o.Status, o.Outcome, o.Why = 128+st.Signal, "signal", "the binary was killed by "+sig.String()
	default:
		o.Status = st.Code
	}
	if o.Outcome == "" {
		o.Outcome = vmflags.OutcomeOf(o.Status)
	}
	o.Why, _, _ = strings.Cut(o.Why, "\n")
	if cfg.outcome != "" {
		if err := vmflags.AppendOutcome(cfg.outcome, o); err != nil {
			fmt.Fprintf(os.Stderr, "vmexec: -outcome: %v\n", err)
		}
	}
	if sig != 0 {
		dieBySignal(sig)
	}
	os.Exit(o.Status)
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
