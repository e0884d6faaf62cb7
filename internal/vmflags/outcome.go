//go:build linux

package vmflags

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"os"
)

// vmexec's own exit statuses (vmexec's package doc says when each is
// given). Any other status is the test binary's. They lie above what Go
// test binaries exit with, so a caller tells a lost guest from a failed
// test by the status alone.
const (
	ExitFlags  = 2  // a refused flag; no boot
	ExitFailed = 80 // vmexec could not run the binary for a reason of its own
	ExitQEMU   = 81 // QEMU missing, or ended before the kernel's first line
	ExitDied   = 82 // the guest died: a panic, an oops, no init, QEMU gone
	ExitFroze  = 83 // the guest sent nothing for -stall
)

// An Outcome is how one vmexec run ended, one JSON line a run in the
// -outcome file: go test -exec reports every failure as exit status 1.
type Outcome struct {
	Status  int    `json:"status"`  // vmexec's exit status
	Outcome string `json:"outcome"` // OutcomeOf(Status), or "signal"
	Program string `json:"program"` // the test binary, as given
	Dir     string `json:"dir"`     // go test's package directory
	Why     string `json:"why,omitempty"`
}

// OutcomeOf names an exit status: exited (the binary's own), failed,
// qemu, died or froze.
func OutcomeOf(status int) string {
	if s, ok := map[int]string{ExitFailed: "failed", ExitQEMU: "qemu", ExitDied: "died", ExitFroze: "froze"}[status]; ok {
		return s
	}
	return "exited"
}

// Lost says whether the run lost its guest (it died or froze): what a
// caller may retry.
func (o Outcome) Lost() bool { return o.Status == ExitDied || o.Status == ExitFroze }

// AppendOutcome appends o to the file at path in one O_APPEND write, so
// that the runs of one go test -exec may share the file.
func AppendOutcome(path string, o Outcome) error {
	b, err := json.Marshal(o)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(append(b, '\n'))
	return cmp.Or(err, f.Close())
}

// ReadOutcomeFile reads what -outcome wrote to path, one Outcome a line;
// a missing or empty file holds none.
func ReadOutcomeFile(path string) ([]Outcome, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	} else if err != nil || len(b) == 0 {
		return nil, err
	}
	var out []Outcome
	for n, line := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
		var o Outcome
		if err := json.Unmarshal(line, &o); err != nil {
			return nil, fmt.Errorf("%s: line %d: %v", path, n+1, err)
		}
		out = append(out, o)
	}
	return out, nil
}
