//go:build linux

package pulse

import (
	"errors"
	"fmt"

	"github.com/kbench/kbench/internal/procfs"
	"github.com/kbench/kbench/internal/skip"
	"github.com/kbench/kbench/internal/thread"
)

// statusField is the main thread's indirect-branch line in
// /proc/<pid>/task/<pid>/status (Linux 5.11+).
const statusField = procfs.IndirectBranch

// CheckContained checks that protection stayed on the throw-away threads:
// the main thread (from its status file, which prints what
// PR_GET_SPECULATION_CTRL would answer there) and a new thread.Run thread
// (by prctl) must both still read the process's initial state. On a kernel
// without the status line only the new thread is checked, and note says so.
func CheckContained() (note string, err error) {
	if initialErr != nil {
		return fmt.Sprintf("containment not checked: PR_GET_SPECULATION_CTRL(PR_SPEC_INDIRECT_BRANCH) fails with %s", skip.Errno(initialErr)), nil
	}
	var fresh State
	var freshErr error
	if err := thread.Run(func() error {
		fresh, freshErr = linux{}.get()
		return nil
	}); err != nil {
		return "", err
	}
	var text string
	st, mainErr := procfs.MainThread()
	if mainErr == nil {
		text, mainErr = st.String(statusField)
	}
	return compareContained(initial, fresh, freshErr, text, mainErr)
}

// compareContained judges what CheckContained read.
func compareContained(initial, fresh State, freshErr error, mainText string, mainErr error) (string, error) {
	if freshErr != nil {
		return "", fmt.Errorf("containment: a new thread's PR_GET_SPECULATION_CTRL failed with %s, the main thread started with %s", skip.Errno(freshErr), initial.Describe())
	}
	if fresh != initial {
		return "", fmt.Errorf("containment: a new thread reads %s, the main thread started with %s: protection leaked past the throw-away threads", fresh.Describe(), initial.Describe())
	}
	if errors.Is(mainErr, procfs.ErrMissing) {
		return fmt.Sprintf("containment: main thread not checked, its status file has no %s line (Linux 5.11+); a new thread reads %s as at start", statusField, fresh), nil
	}
	if mainErr != nil {
		return "", fmt.Errorf("containment: reading the main thread's status: %w", mainErr)
	}
	now, err := ParseStatus(mainText)
	if err != nil {
		return "", fmt.Errorf("containment: main thread: %w", err)
	}
	if now != initial {
		return "", fmt.Errorf("containment: the main thread now reads %s (status %q), it started with %s: protection leaked onto the main thread", now.Describe(), mainText, initial.Describe())
	}
	return "", nil
}
