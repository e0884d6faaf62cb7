//go:build linux

// Package skip holds the feature probes' error type and the helpers that
// turn a missing kernel feature, privilege, CPU or server into a b.Skip
// whose message says what is missing and how to get it.
//
// As in cilium/ebpf's testutils, a probe failure is only a skip where the
// feature may really be absent: when CI is set and the running kernel is at
// least as new as the release that brought the feature, the helper fails
// the test instead, so that CI cannot go green by skipping everything.
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
	if mustHave(err) {
		tb.Fatalf("CI is set and kernel %s is new enough, yet: %v", Kernel(), err)
	}
	tb.Skip(err)
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

// mustHave reports whether a missing feature should be a failure here.
func mustHave(err error) bool {
	var u *Unsupported
	if os.Getenv("CI") == "" || !errors.As(err, &u) || u.Since.IsZero() {
		return false
	}
	return !Kernel().Less(u.Since)
}

// NeedProcs skips tb unless GOMAXPROCS is at least n.
func NeedProcs(tb testing.TB, n, gomaxprocs int) {
	tb.Helper()
	if gomaxprocs < n {
		tb.Skipf("needs GOMAXPROCS >= %d to run its threads at once, have %d; drop -cpu=%d or raise it", n, gomaxprocs, gomaxprocs)
	}
}
