//go:build linux

package procfs

// A thread's status file (/proc/<pid>/task/<tid>/status) is the kernel's
// own account of its seccomp mode, filter count, no_new_privs bit,
// speculation controls and context switches.
//
// Fields appear in different kernel releases (Seccomp_filters since 5.9;
// SpeculationIndirectBranch, fs/proc/array.c's indirect-branch line, since
// 5.11, commit fe719888344c "proc: provide details on indirect branch
// speculation"), so a missing field is reported as ErrMissing, which
// callers turn into a degraded check with a note.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// IndirectBranch is the status line fs/proc/array.c prints for a task's
// indirect-branch speculation control (Linux 5.11+), with
// PR_GET_SPECULATION_CTRL's answer in words.
const IndirectBranch = "SpeculationIndirectBranch"

// ErrMissing reports that the kernel does not print a field (of a status
// file, a netstat group).
var ErrMissing = errors.New("field not present")

// Status holds the fields of one status file.
type Status struct {
	Path   string
	fields map[string]string
}

// ReadStatus parses the status file at path.
func ReadStatus(path string) (*Status, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseStatus(path, data), nil
}

// ParseStatus parses the contents of a status file read from path.
func ParseStatus(path string, data []byte) *Status {
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

// Status reads process pid's status: its main thread's fields, with the
// memory and signal lines of the whole process.
func (fs FS) Status(pid int) (*Status, error) { return ReadStatus(fs.procPath(pid, "status")) }

// TaskStatus reads the status of thread tid of process pid.
func (fs FS) TaskStatus(pid, tid int) (*Status, error) {
	return ReadStatus(fs.taskPath(pid, tid, "status"))
}

// ThreadSelf reads the calling thread's status from Host. Callers must
// hold their OS thread (runtime.LockOSThread) for the answer to mean
// anything.
func ThreadSelf() (*Status, error) {
	return ReadStatus(filepath.Join(Host.Dir, "thread-self", "status"))
}

// Thread reads the status of thread tid of this process from Host.
func Thread(tid int) (*Status, error) { return Host.TaskStatus(os.Getpid(), tid) }

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
