//go:build linux

package abfile

import (
	"regexp"
	"strings"

	"github.com/kbench/kbench/internal/fingerprint"
)

// BootIDKey is the fingerprint key of the boot a result file's following
// lines ran in, and BootIDLine starts its line: each benchmark package's
// TestMain prints it (fingerprint.Collect), and boots are told apart by
// it (kbab checks that each of its boots printed a fresh one).
const (
	BootIDKey  = "kernel.boot_id"
	BootIDLine = fingerprint.Prefix + BootIDKey + ": "
)

// BootID returns the boot id a line names, if it is a boot id line.
func BootID(line string) (string, bool) {
	id, ok := strings.CutPrefix(line, BootIDLine)
	return strings.TrimSpace(id), ok
}

// procsSuffix is go test's -GOMAXPROCS suffix of a row's name.
var procsSuffix = regexp.MustCompile(`-[0-9]+$`)

// WithoutProcs is a row's name without go test's -GOMAXPROCS suffix:
// "Syscall/filters=0-2" is "Syscall/filters=0", as go test's -bench
// pattern and its --- FAIL lines of a probe run name it.
func WithoutProcs(name string) string { return procsSuffix.ReplaceAllString(name, "") }
