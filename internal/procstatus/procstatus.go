// Package procstatus reads fields of /proc/<pid>/task/<tid>/status, the
// kernel's own account of a thread's seccomp mode, filter count,
// no_new_privs bit and speculation controls.
//
// Fields appear in different kernel releases (Seccomp_filters since 5.9;
// SpeculationIndirectBranch, fs/proc/array.c's indirect-branch line, since
// 5.11, commit fe719888344c "proc: provide details on indirect branch
// speculation"), so a missing field is reported as ErrMissing, which
// callers turn into a degraded check with a note.
package procstatus

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// IndirectBranch is the status line fs/proc/array.c prints for a task's
// indirect-branch speculation control (Linux 5.11+), with
// PR_GET_SPECULATION_CTRL's answer in words.
const IndirectBranch = "SpeculationIndirectBranch"

// ErrMissing reports that the kernel does not print a field.
var ErrMissing = errors.New("field not present in status file")

// Status holds the fields of one status file.
type Status struct {
	Path   string
	fields map[string]string
}

// Read parses a status file.
func Read(path string) (*Status, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data), nil
}

// Parse parses the contents of a status file read from path.
func Parse(path string, data []byte) *Status {
	s := &Status{Path: path, fields: make(map[string]string)}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok {
			s.fields[k] = strings.TrimSpace(v)
		}
	}
	return s
}

// ThreadSelf reads the calling thread's status. Callers must hold their OS
// thread (runtime.LockOSThread) for the answer to mean anything.
func ThreadSelf() (*Status, error) { return Read("/proc/thread-self/status") }

// Thread reads the status of thread tid of this process.
func Thread(tid int) (*Status, error) {
	return Read(fmt.Sprintf("/proc/%d/task/%d/status", os.Getpid(), tid))
}

// MainThread reads the status of the process's main thread (tid == pid).
func MainThread() (*Status, error) { return Thread(os.Getpid()) }

// String returns a field's raw value.
func (s *Status) String(field string) (string, error) {
	v, ok := s.fields[field]
	if !ok {
		return "", fmt.Errorf("%s: %s: %w", s.Path, field, ErrMissing)
	}
	return v, nil
}

// Int returns a decimal field.
func (s *Status) Int(field string) (int, error) {
	v, err := s.String(field)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("%s: %s: %q is not a number", s.Path, field, v)
	}
	return n, nil
}

// Octal returns an octal field such as Umask.
func (s *Status) Octal(field string) (int, error) {
	v, err := s.String(field)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(v, 8, 32)
	if err != nil {
		return 0, fmt.Errorf("%s: %s: %q is not an octal number", s.Path, field, v)
	}
	return int(n), nil
}
