//go:build linux

// Command kbab compares kernels the way kbench's statistics need it: it
// boots each kernel in QEMU guests, interleaved, runs the same go test
// command in every boot, appends each boot's output to its kernel's
// file DIR/LABEL.txt, and ends with a report judged in-process. Four
// designs, one mechanism (designs.go: each says which kernel boots next
// and writes the report; boot, state, resume and vmexec are shared);
// docs/comparing.md says what each design does, why, and what it
// promises:
//
//	# A/B, fixed: -boots boots a side, ABBA; kbcompare's report of A.txt against B.txt
//	go run ./internal/cmd/kbab -out DIR -a-kernel IMAGE [-a-append ARGS]
//	    -b-kernel IMAGE [-b-append ARGS] [-boots 3] [-smp N] [-memory SIZE]
//	    [-accel auto|kvm|tcg] [-vmexec PATH] [-profile N] -- PACKAGES [go test flags]
//	# A/B, planned: Stein's two-stage test, boots until each row is decided (abplan)
//	go run ./internal/cmd/kbab -out DIR -a-kernel ... -b-kernel ... -target 5% [-budget D] -- ...
//	# series: change points over kernels K1..Kn (abseries)
//	go run ./internal/cmd/kbab -series LIST -out DIR [-boots 5] -- PACKAGES [go test flags]
//	# bisection: the first bad image of LIST, good first, bad last
//	go run ./internal/cmd/kbab -bisect LIST -row PATTERN -out DIR [-target 5%] [-budget D] -- ...
//	# kernels built from a source tree (source.go, docs/builds.md): commits for images
//	go run ./internal/cmd/kbab -tree DIR -a-kernel REV -b-kernel REV [-b-patch FILE] ...
//	go run ./internal/cmd/kbab -tree DIR -series|-bisect GOOD..BAD ...
//
// LIST is a file with a kernel a line, in series order: `LABEL IMAGE
// [cmdline args...]`; blank lines and # comments are skipped; a relative
// IMAGE is taken from LIST's directory; the same image may repeat with
// other cmdlines, a label may not (it names LABEL.txt: letters, digits,
// . _ + -).
//
// A kernel is an image plus a cmdline: the same image with two cmdlines
// is a valid A/B. Every boot is `go test -exec 'vmexec -kernel IMAGE
// -append ARGS ...' -count=1 -p=1 ARGS...`, run in the directory kbab
// runs in; -smp, -memory and -accel go to vmexec, checked first by
// vmexec's rules (internal/vmflags): a value vmexec would refuse stops
// kbab with exit 2 before it builds anything or boots. vmexec boots one
// VM per test binary, and kbcompare tells boots apart by the guests'
// kernel.boot_id fingerprint lines. -count=1 is added unless the flags
// set -count, so go test never replays a cached result as a boot (a boot
// whose output has no boot id, or one an earlier boot had, fails), and
// -p=1 unless they set -p, so one VM runs at a time. With -target, go
// test flags with a value must be written -flag=value, and -count=N is
// every boot's. -profile N (an A/B's alone; profile.go) adds N profile
// boots a side after the timed ones (docs/profiles.md).
//
// vmexec is built with `CGO_ENABLED=0 go build` from this module into
// DIR/bin at every start (static, because it is also the guest's init),
// so kbab must run inside the kbench module; -vmexec takes a prebuilt
// one instead.
//
// Files in DIR: LABEL.txt for each kernel (A.txt and B.txt for an A/B;
// the finished boots, appended one whole boot at a time),
// boots/NN-LABEL.txt and boots/NN-LABEL.log (boot NN's go test stdout and
// stderr; pNN-A for profile boots), profiles/ (-profile), report.txt
// (the report), plan.txt (with -target and -bisect), series/ (a series'
// pictures) and kbab.json, the settings, the finished boots (each with
// its kernel's label, time, go test runs and retry: its output, boot ids
// included, is its boots/NN-LABEL.txt), a planned run's counts and the
// boot pair under way, a bisection's confirmation. kbab.json carries
// "version": 3; a run begun by an older kbab is refused, naming the
// version. Rerunning with the same -out resumes after the last finished
// boot; kbab refuses when any setting differs (images are compared by
// SHA-256, commits by their build key) and names it. Run with every boot
// finished, it prints the report again.
//
// What a crash or an edit can leave in -out is refused or repaired, never
// merged. A kbab.json that is cut short, not JSON, or whose boots do not
// add up (order, sides) is refused with exit 2, naming the line and
// column or the boot and what was expected, as is a finished boot whose
// output file is gone or whose boot ids another boot printed. In a
// kernel's file, bytes past the last finished boot are an append cut
// short: they are cut off, with a message, and that boot runs again. A
// file that ends inside a finished boot's output, or whose bytes are not
// that output, is refused with exit 2, naming the boot.
//
// Ctrl-C (or SIGTERM) interrupts the running boot's go test and its VM,
// keeps the finished boots and exits 130. A failed boot (go test exited
// non-zero, or no fresh boot id) stops the run with exit status 3: its
// files stay in boots/ (a retry renames them NN-A.try1.txt, ...), and a
// rerun retries it. A boot whose guest died or froze (vmexec's exit
// status, recorded in boots/NN-A.outcome) runs again once, and the
// report ends with a "retried:" line; a second loss stops the run as
// above. A failure stops the run because kbcompare never calls a
// comparison with a failure in it "nothing worse": the remaining boots
// cannot change the answer.
//
// Progress goes to stderr: boot i (of the run's boots where the design
// knows them), which kernel, elapsed time and the time left.
//
// Exit status: an A/B's kbcompare's (0 nothing worse, 1 something worse
// or failed, 2 a file it cannot read); a series' kbcompare -series' (1 a
// worse change point or a row that could not be tested, else 0); a
// bisection's 0 a first bad image named, 1 cannot tell or not one step
// (abreport's Exit methods, which both commands call); and for every
// design 2 for bad options or a setup that cannot run, 3 for a failed
// boot, 130 when interrupted.
package main

import (
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
		if err != errHelp {
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
