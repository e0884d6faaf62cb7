//go:build linux

// Package skip holds the feature probes' error type and the helpers that
// turn a missing kernel feature, privilege, CPU or server into a b.Skip
// whose message says what is missing and how to get it.
//
// As in cilium/ebpf's testutils, a probe failure is only a skip where the
// feature may really be absent: a missing feature whose Unsupported names
// the release that brought it (Since) fails the test instead, on a kernel
// at or above that release, when KBENCH_SINCE is fail, so that CI and the
// kernel matrix cannot go green by skipping a feature the kernel has.
//
// KBENCH_SINCE accepts skip (a missing feature skips, whatever the
// kernel's release: a user's kernel may be built without it) or fail
// (it fails on a kernel at or above Since). Unset, it is fail where CI
// is set and skip elsewhere. vmexec passes KBENCH_* variables into its
// guests, not CI, so .ci's kernel matrix sets KBENCH_SINCE=fail for every
// guest. A bad value fails the first test that would skip, naming the
// variable. Set Since only where the release alone decides: a feature
// that also needs the CPU (spec-ctrl under TCG), a config option
// distributions leave out, or a privilege, leaves it zero.
//
// # Skip lines
//
// A benchmark row skips through Now or Nowf (or the helpers here, which
// call them), never b.Skip: each prints the row's skip line (LinePrefix
// has its format) to the standard output before skipping, so that the
// default go test output, without -v, says which row skipped and why.
// internal/abfile reads these lines as the row's SKIP, and kbcompare
// fails a row that ran on one side and skipped on the other.
package skip

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// ErrNotSupported is wrapped by every probe error that means "this kernel
// or machine cannot do it", as opposed to a benchmark bug.
var ErrNotSupported = errors.New("not supported")

// Unsupported describes a missing feature.
type Unsupported struct {
	Feature string  // what was probed, e.g. "seccomp(SECCOMP_SET_MODE_FILTER)"
	Err     error   // the errno or other cause
	Since   Version // first kernel release with the feature; zero if not a kernel feature
	Hint    string  // how to get it
}

func (e *Unsupported) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s not supported", e.Feature)
	if e.Err != nil {
		fmt.Fprintf(&b, ": %s", describe(e.Err))
	}
	if !e.Since.IsZero() {
		fmt.Fprintf(&b, " (needs Linux %s or later)", e.Since)
	}
	if e.Hint != "" {
		fmt.Fprintf(&b, "; %s", e.Hint)
	}
	return b.String()
}

// Is makes errors.Is(err, ErrNotSupported) true.
func (e *Unsupported) Is(target error) bool { return target == ErrNotSupported }

func (e *Unsupported) Unwrap() error { return e.Err }

// describe names an errno by its symbol as well as its text.
func describe(err error) string {
	var errno unix.Errno
	if errors.As(err, &errno) {
		if name := unix.ErrnoName(errno); name != "" {
			return fmt.Sprintf("%s (%v)", name, err)
		}
	}
	return err.Error()
}

// Errno formats an errno as "EINVAL (invalid argument)" for messages.
func Errno(err error) string { return describe(err) }

// IfNotSupported skips tb when err wraps ErrNotSupported, fails it on any
// other error, and returns when err is nil. Under CI, a feature that the
// running kernel should have fails instead of skipping.
func IfNotSupported(tb testing.TB, err error) {
	tb.Helper()
	if err == nil {
		return
	}
	if !errors.Is(err, ErrNotSupported) {
		tb.Fatal(err)
	}
	must, merr := mustHave(err, os.LookupEnv)
	if merr != nil {
		tb.Fatal(merr)
	}
	if must {
		tb.Fatalf("%s=fail and kernel %s is at or above the release that brought it, yet: %v", SinceVar, Kernel(), err)
	}
	Now(tb, err)
}

// OnlyIfNotSupported skips tb, as IfNotSupported does, when err wraps
// ErrNotSupported, and otherwise returns: any other error is the
// caller's to report, with its own context.
func OnlyIfNotSupported(tb testing.TB, err error) {
	tb.Helper()
	if errors.Is(err, ErrNotSupported) {
		IfNotSupported(tb, err)
	}
}

// SinceVar is the variable that makes a missing feature of a new enough
// kernel a failure (see the package doc).
const SinceVar = "KBENCH_SINCE"

// mustHave reports whether a missing feature should be a failure here:
// KBENCH_SINCE (looked up with lookup) is fail, or unset with CI set, and
// the running kernel is at or above the feature's Since.
func mustHave(err error, lookup func(string) (string, bool)) (bool, error) {
	mode, set := lookup(SinceVar)
	if !set {
		mode = "skip"
		if ci, _ := lookup("CI"); ci != "" {
			mode = "fail"
		}
	}
	if mode != "skip" && mode != "fail" {
		return false, fmt.Errorf("%s=%q: it accepts skip or fail (unset: fail where CI is set, else skip)", SinceVar, mode)
	}
	var u *Unsupported
	if mode == "skip" || !errors.As(err, &u) || u.Since.IsZero() {
		return false, nil
	}
	return !Kernel().Less(u.Since), nil
}

// NeedProcs skips tb unless GOMAXPROCS is at least n.
func NeedProcs(tb testing.TB, n, gomaxprocs int) {
	tb.Helper()
	if gomaxprocs < n {
		Nowf(tb, "needs GOMAXPROCS >= %d to run its threads at once, have %d; drop -cpu=%d or raise it", n, gomaxprocs, gomaxprocs)
	}
}
