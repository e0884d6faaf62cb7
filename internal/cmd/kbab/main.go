//go:build linux

// Command kbab compares kernels: it boots each in QEMU guests,
// interleaved, runs the same go test command in every boot, appends
// each boot's output to its kernel's file DIR/LABEL.txt, and ends with
// a report judged in-process. docs/kbab.md gives its command lines,
// files, resume and exit statuses; docs/comparing.md its designs.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, sig))
}

// Exit statuses of kbab's own (kbcompare's pass through).
const (
	exitUsage       = 2
	exitBootFailed  = 3
	exitInterrupted = 130
)

func run(args []string, stdout, stderr io.Writer, sig <-chan os.Signal) int {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		if err != flag.ErrHelp {
			fmt.Fprintf(stderr, "kbab: %v\n", err)
		}
		return exitUsage
	}
	d, err := prepare(cfg, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "kbab: %v\n", err)
		return exitUsage
	}
	defer d.close()
	return d.runAll(stdout, sig)
}
