//go:build linux

// Command kbab compares kernels the way kbench's statistics need it: it
// boots each kernel in QEMU guests, interleaved, runs the same go test
// command in every boot, appends each boot's output to its kernel's
// file DIR/LABEL.txt, and ends with a report judged in-process. It is the
// README's boots procedure as one command on a machine nobody has to
// reboot. Four designs, one mechanism (designs.go: each says which kernel
// boots next and writes the report; boot, state, resume and vmexec are
// shared):
//
//	# A/B, fixed: -boots boots a side, ABBA; kbcompare's report of A.txt against B.txt
//	go run ./internal/cmd/kbab -out DIR -a-kernel IMAGE [-a-append ARGS]
//	    -b-kernel IMAGE [-b-append ARGS] [-boots 3] [-smp N] [-memory SIZE]
//	    [-accel auto|kvm|tcg] [-vmexec PATH] [-profile N] -- PACKAGES [go test flags]
//	# A/B, planned: boots until each row is decided (abplan)
//	go run ./internal/cmd/kbab -out DIR -a-kernel ... -b-kernel ... -target 5% [-budget D] -- ...
//	# series: change points over kernels K1..Kn
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
// . _ + -). A line per kernel rather than flags: a series is tens of
// kernels, and a file that names each by its release is the record of
// what the series was.
//
// Series (-series): -boots boots of every kernel of the whole command
// (abseries.DefaultBoots, 5: what a 10% step mid-series of 8 kernels
// needs for rows whose boot medians spread ±5%; abseries.BootsFor for
// others). The report
// (report.txt and stdout) tests each row's boot medians by kernel for
// change points with package abseries (binary segmentation over the
// kernel boundaries, a permutation test, the rows one family corrected
// by Benjamini and Hochberg as kbcompare's are): per row that changed,
// between which two kernels, by how much, with an interval, and a
// picture in DIR/series/ROW.png (and .svg): the boot medians by kernel,
// the centers, the change marked; per row without one, the step it
// could have seen mid-series and before the last kernel. Exit status as
// kbcompare -series's (abreport.SeriesReport.Exit).
//
// Bisection (-bisect): first the planned A/B below (-target, 5% unless
// given; -budget) of the first kernel (good) against the last (bad)
// confirms that the -row (a regexp matching exactly one row's name)
// differs; where it does not, the report says it cannot tell and kbab
// exits 1 without booting an image between. Then abseries.Search picks
// the middle image, and kbab boots it, one boot at a time, each a go test
// of the row's package at the design's -count with -bench of the row
// alone, until Wald's sequential test decides it like good or like bad
// (at least 2, at most 30 boots; the chance of ending at the wrong image
// at most 10% over the ⌈log2(images+1)⌉ steps, abseries' doc says how),
// and halves the bracket, until it is one image wide. The report is the
// confirmation's kbcompare report, then each step (image, boots,
// decision), the first bad image by label, the steps and the boots
// spent; exit 0, or 1 where a step stayed undecided at its 30 boots
// ("cannot tell", with the bracket it reached). The search is rebuilt at
// every start from the finished boots, so a resumed bisection boots what
// the first would have.
//
// The A/B's two designs. -target plans the boots with Stein's two-stage test
// (package abplan; docs/comparing.md): a pilot of 6 boots a side (ABBA)
// of the whole command, every boot at one -count (the go test flags'
// -count=N, else 10), fixed before the pilot; from the pilot's pooled spread of boot medians alone, each row's
// boots a side, n = max(6, ⌈2 s0² (t(1-a/2) + t(0.8))² / d²⌉) on the
// pilot's degrees of freedom, a = 0.05 over the rows, d = log(1 + target);
// then pairs of boots (ABBA) of only the packages and rows still short of
// their n, each package one go test with -bench built from those rows.
// Each row is then tested on the mean of its n boots a side against the
// pilot's spread alone, on t with the pilot's degrees of freedom, so that
// the false-alarm rate is alpha whatever n came out, and a change of the
// target is called worse in at least 80% of runs (more where the pilot
// alone gives a row more boots than it needs). -budget bounds the run by
// A's boot times doubled (what B's speed cannot move): rows whose boots
// do not fit, or that would need more than 30 a side, get no verdict
// ("undecided: N+N boots, mde X%"), stay out of the exit status, and count
// in the family as p = 1. What runs next depends on the pilot's spreads
// and A's costs alone, never on the difference between A and B. Progress
// lines give the rows decided, pending and undecided and the time left;
// DIR/plan.txt holds the design, and the report ends with the rule and the
// rows without a verdict. With -target, go test flags with a value must
// be written -flag=value, and -count=N is every boot's.
// Without -target, the fixed design: -boots boots a side (3) of the whole
// command.
//
// A kernel is an image plus a cmdline: the same image with two cmdlines
// (`-b-append mitigations=off`, `-b-append sysctl.net.core.bpf_jit_harden=2`)
// is a valid A/B. Every boot is `go test -exec 'vmexec -kernel IMAGE
// -append ARGS ...' -count=1 -p=1 ARGS...`, run in the directory kbab runs in;
// -smp, -memory and -accel go to vmexec as given (unset: vmexec's
// defaults). They, the -append values and the kernel images are checked
// first by the rules vmexec checks them by (internal/vmflags): a value
// vmexec would refuse (-memory 2048, -smp 999) stops kbab with exit 2
// before it builds anything or boots. vmexec boots one VM per test binary, so a boot of kbab is one
// VM boot per package; kbcompare tells boots apart by the guests'
// kernel.boot_id fingerprint lines, which each benchmark package prints,
// so every row has N boots a side. -count=1 is added unless the flags set
// -count, so go test never replays a cached result as a boot (a boot whose
// output has no boot id, or one an earlier boot had, fails), and -p=1
// unless they set -p, so one VM runs at a time and no two packages'
// guests share the host's CPUs.
//
// Profiles (-profile N, an A/B's alone; profile.go): after the timed boots, N profile
// boots a side, ABBA, each the same go test command with KBENCH_PROFILE,
// whose kernel profiles go to DIR/profiles/A/pNN and DIR/profiles/B/pNN
// (kbcompare's -profiles-old and -profiles-new layout); the report ends
// with the perf-profile section of them (docs/profiles.md). Profile
// boots of their own, since sampling slows the rows: no timed boot is
// profiled.
//
// Order: ABBA (A B B A A B ...), not A B A B. Strict alternation always
// runs A first in each pair, so anything that drifts over the run (a
// machine warming up, a neighbour's load, a filling page cache) leans on
// one side; in ABBA each kernel holds the early and the late place of
// every four boots alike, which cancels a linear drift, and each kernel
// still never runs twice in a row more than once per pair. A series
// generalizes it: rounds that boot every kernel once, every other round
// reversed (K1..Kn, Kn..K1), so that over each pair of rounds every
// kernel's mean place is the same and a linear drift adds the same to
// each (in the order K1..Kn repeated it would lean on the later kernels:
// a change point made by the clock); and each pair of rounds rotated by
// one kernel more than the last (K2..Kn K1, K1 Kn..K2), so that over n
// pairs every kernel holds every place and a drift that is not linear
// does not stay on the same kernels. A bisection's confirmation is ABBA
// of good and bad; its steps boot the image the search asks for.
//
// Tools: vmexec is built with `CGO_ENABLED=0 go build` from this module
// into DIR/bin at every start (the Go build cache makes that quick;
// static, because vmexec is also the guest's init), so kbab must run
// inside the kbench module; -vmexec takes a prebuilt one instead. The
// comparison needs no tool: it runs in-process.
//
// Files in DIR: LABEL.txt for each kernel (A.txt and B.txt for an A/B;
// the finished boots, appended one whole boot at a time),
// boots/NN-LABEL.txt and boots/NN-LABEL.log (boot NN's go test stdout and
// stderr; pNN-A for profile boots), profiles/ (-profile), report.txt
// (the report), plan.txt (with -target and -bisect), series/ (a series'
// pictures) and kbab.json, the settings, the finished boots (each with
// its kernel's label and the offset, length and SHA-256 of what it
// appended), a planned run's counts and the boot pair under way, a
// bisection's confirmation. kbab.json carries "version": 2 (the kernels a
// list by label); an A/B begun by a kbab before series (version 1, no
// "version", sides "a" and "b") is refused, naming the version: finish
// it with the kbab that began it, or use a new -out. Rerunning with the same -out resumes after the
// last finished boot; kbab refuses when any setting differs (images are
// compared by SHA-256, so a rebuilt kernel at the same path counts as
// different) and names it. Run with every boot finished, it prints the
// report again.
//
// What a crash or an edit can leave in -out is refused or repaired, never
// merged. A kbab.json that is cut short, not JSON, or whose boots do not
// add up (order, sides, offsets, checksums, boot ids) is refused with exit
// 2, naming the line and column or the boot and what was expected: kbab
// cannot tell which boots finished under which settings, and rebuilding
// it from the files could merge boots of another run, so the user
// restores it or starts a new -out. In A.txt and B.txt, bytes past the
// last finished boot are an append cut short (or a boot whose end
// kbab.json does not record yet): they are cut off, with a message, and
// that boot runs again. A file that ends inside a finished boot's output,
// or whose bytes are not what the boot appended, is refused with exit 2,
// naming the boot and its bytes.
//
// Ctrl-C (or SIGTERM) interrupts the running boot's go test and its VM,
// keeps the finished boots and exits 130. A failed boot (go test exited
// non-zero, or no fresh boot id) stops the run with exit status 3: its
// files stay in boots/ (a retry renames them NN-A.try1.txt, ...), A.txt
// and B.txt (each kernel's file) keep only finished boots, and a rerun retries it. One kind is
// retried at once: a boot whose guest died or froze (vmexec's exit
// status, which vmexec's -outcome file, boots/NN-A.outcome, records, since
// go test reports every failure as 1) runs again once, and the report
// ends with a "retried:" line naming the boot and the first try's loss; a
// second loss stops the run as above. Why stop rather than record and go on: kbcompare
// never calls a comparison with a failure in it "nothing worse", so the
// remaining boots (minutes to hours) cannot change the answer, and a
// failure is the thing to read first; a row a kernel fails is itself the
// result of the A/B.
//
// Progress goes to stderr: boot i (of the run's boots where the design
// knows them), which kernel, elapsed time and the time left (from the
// mean of the finished boots, or the plan's; a bisection's bracket and
// step boots so far).
//
// Exit status: an A/B's kbcompare's (0 nothing worse, 1 something worse
// or failed, 2 a file it cannot read); a series' kbcompare -series' (1 a
// worse change point or a row that could not be tested, else 0); a
// bisection's 0 a first bad image named, 1 cannot tell (abreport's
// ExitAB and Exit methods, which both commands call); and for every design 2 for bad options or a setup that
// cannot run, 3 for a failed boot, 130 when interrupted.
//
// Under TCG (this project's CI and its results) a series or a bisection
// is a test of the machinery: emulation slows kernel paths unevenly, so
// a change point found there says what the kernels do under QEMU's
// translator, not on hardware. A series meant to find a release's
// regression needs KVM (-accel kvm, a host whose KVM boots the images)
// or hardware, the same -smp and -memory throughout, and a quiet host:
// the balanced order cancels a drift, not a neighbour's bursts.
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
