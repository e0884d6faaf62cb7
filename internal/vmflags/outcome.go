//go:build linux

package vmflags

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// vmexec's exit statuses of its own. Any other status is the test
// binary's, passed through (128+N for a binary killed by signal N, as a
// shell gives it; vmexec then dies by that signal itself). They lie above
// what Go test binaries exit with (0, 1, and 2 for a panic or go test's
// -test.timeout), so that a caller tells a lost guest from a failed test
// by the status alone.
const (
	// ExitFlags: a flag vmexec refuses (also its value for -h); no boot.
	ExitFlags = 2
	// ExitFailed: vmexec could not run the binary for a reason of its
	// own: a host-side error (the image, the initramfs), the guest's init
	// could not start the binary, a corrupt data port, or -timeout
	// reached while the binary still answered (a test that hangs).
	ExitFailed = 80
	// ExitQEMU: QEMU is missing, could not start, or ended before the
	// kernel printed its first line (a bad option, an accelerator it
	// cannot open).
	ExitQEMU = 81
	// ExitDied: the guest died: a kernel panic (an oops in an interrupt,
	// a soft lockup: panic=-1 and softlockup_panic=1 make them one), an
	// oops on the console (the binary's status then came from a broken
	// kernel), the kernel never reached init within -boot-timeout, or
	// QEMU ended before the binary's exit status came back.
	ExitDied = 82
	// ExitFroze: the guest froze: it sent no byte at all (console, the
	// binary's output, init's heartbeat) for -stall, or it answered
	// -timeout's SIGQUIT with nothing.
	ExitFroze = 83
)

// An Outcome is how one vmexec run ended, as -outcome FILE records it:
// one JSON object a line, one line a run, appended, so that a caller
// that runs go test -exec (which reports every failure as exit status 1)
// still learns each binary's.
type Outcome struct {
	Status  int    `json:"status"`  // vmexec's exit status
	Outcome string `json:"outcome"` // OutcomeOf(Status), or "signal" when vmexec died by the binary's or its own signal
	Program string `json:"program"` // the test binary, as given
	Dir     string `json:"dir"`     // the working directory: go test's package directory
	Why     string `json:"why,omitempty"`
}

// OutcomeOf names an exit status: exited (the binary's own), failed,
// qemu, died or froze.
func OutcomeOf(status int) string {
	switch status {
	case ExitFailed:
		return "failed"
	case ExitQEMU:
		return "qemu"
	case ExitDied:
		return "died"
	case ExitFroze:
		return "froze"
	}
	return "exited"
}

// Lost says whether the run lost its guest (it died or froze) rather
// than ran the binary to its end: what a caller may retry.
func (o Outcome) Lost() bool { return o.Status == ExitDied || o.Status == ExitFroze }

// AppendOutcome appends o to the file at path as one line, in one write
// (O_APPEND), so that runs of one go test -exec may share the file.
func AppendOutcome(path string, o Outcome) error {
	b, err := json.Marshal(o)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ReadOutcomes reads what -outcome wrote: one Outcome a line.
func ReadOutcomes(r io.Reader) ([]Outcome, error) {
	var out []Outcome
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for n := 1; sc.Scan(); n++ {
		var o Outcome
		if err := json.Unmarshal(sc.Bytes(), &o); err != nil {
			return nil, fmt.Errorf("line %d: %v", n, err)
		}
		out = append(out, o)
	}
	return out, sc.Err()
}

// ReadOutcomeFile is ReadOutcomes of a file; a file that does not exist
// holds no outcome.
func ReadOutcomeFile(path string) ([]Outcome, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out, err := ReadOutcomes(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return out, nil
}
