//go:build linux

// Command seccompexec runs a program under N seccomp filters that read a
// system call argument, so that every system call the program makes pays
// for running all N filters: a real kernel-side slowdown injected from
// outside the benchmark code. It is meant as `go test -exec`:
//
//	go build -o /tmp/seccompexec ./internal/cmd/seccompexec
//	go test -exec '/tmp/seccompexec -filters=32' -run='^$' -bench=. ./seccompbench
//
// It sets no_new_privs, installs the filters on every thread of its own
// process with SECCOMP_FILTER_FLAG_TSYNC, checks in /proc that each thread
// carries them, prints one fingerprint line saying so, and execs the
// program; seccomp filters survive execve(2). Each filter loads args[0]
// before deciding, which keeps the kernel (5.11+) from answering from its
// per-syscall action cache, as every filter ran before 5.11. The filters
// allow every call but a few no test makes (kexec_load, reboot, ...).
//
// No privilege is needed; the filters die with the program.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"
)

// maxFilters keeps the filters well inside the kernel's limit on the
// instructions of all filters of a task (MAX_INSNS_PER_PATH, 32768).
const maxFilters = 1000

func main() {
	runtime.LockOSThread()
	flags := flag.NewFlagSet("seccompexec", flag.ContinueOnError)
	n := flags.Int("filters", 32, "how many argument-reading filters to install (1-1000)")
	flags.Usage = func() {
		fmt.Fprintln(flags.Output(), "usage: seccompexec [-filters N] program [args...]")
		flags.PrintDefaults()
	}
	if err := flags.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	if *n < 1 || *n > maxFilters || flags.NArg() == 0 {
		fmt.Fprintf(os.Stderr, "seccompexec: -filters accepts 1-%d (got %d) and a program must follow\n", maxFilters, *n)
		flags.Usage()
		os.Exit(2)
	}
	if err := run(*n, flags.Args()); err != nil {
		fmt.Fprintf(os.Stderr, "seccompexec: %v\n", err)
		os.Exit(1)
	}
}

func run(n int, args []string) error {
	path, err := exec.LookPath(args[0])
	if err != nil {
		return err
	}
	prog, err := argFilter()
	if err != nil {
		return err
	}
	before, err := filterCounts()
	if err != nil {
		return err
	}
	if err := install(prog, n); err != nil {
		return err
	}
	after, err := filterCounts()
	if err != nil {
		return err
	}
	if err := checkInstalled(before, after, n); err != nil {
		return err
	}
	// A comment line that benchfmt skips and kbcompare shows when the
	// two runs differ in it.
	fmt.Printf("# kbench inject.seccomp: %d filters reading args[0], TSYNC (seccompexec)\n", n)
	return syscall.Exec(path, args, os.Environ())
}
