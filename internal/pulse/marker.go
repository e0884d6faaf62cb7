//go:build linux

package pulse

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/kbench/kbench/internal/fingerprint"
	"github.com/kbench/kbench/internal/procfs"
)

// A protect pulse's after-effect lasts until reboot (report 000), so a
// test binary that follows one in the same boot measures a contaminated
// machine. The first protect pulse of a process appends a line to a
// marker file named for the boot id, in a directory that reboot empties
// (tmpfs); every later test binary's fingerprint says what it finds there
// (Earlier), and kbcompare warns about it.

// markerDirs are tried in order: /run needs root, /dev/shm does not.
var markerDirs = []string{"/run/kbench", "/dev/shm/kbench"}

var markOnce sync.Once

// markProtect records, once per process, that protect pulses ran.
func markProtect() {
	markOnce.Do(func() { _ = mark(time.Now()) })
}

func markerName() string {
	id, err := procfs.Host.BootID()
	if err != nil || id == "" {
		id = "unknown-boot"
	}
	return "protect-pulses." + id
}

// mark appends "time pid program" to the first marker directory that
// takes it.
func mark(at time.Time) error {
	line := fmt.Sprintf("%s pid %d %s\n", at.UTC().Format(time.RFC3339), os.Getpid(), filepath.Base(os.Args[0]))
	var errs []string
	for _, dir := range markerDirs {
		if err := os.MkdirAll(dir, 0o1777); err != nil {
			errs = append(errs, err.Error())
			continue
		}
		os.Chmod(dir, 0o1777) // any user's test binary may mark or read
		f, err := os.OpenFile(filepath.Join(dir, markerName()), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o666)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		_, err = f.WriteString(line)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			return nil
		}
		errs = append(errs, err.Error())
	}
	return fmt.Errorf("pulse: no marker written: %s", strings.Join(errs, "; "))
}

// Earlier returns the fingerprint field pulse.earlier: "none this boot",
// or the protect pulses that processes of this boot ran before now, as
// "protect: <n> processes, first <time> <program>, last <time> <program>".
// Call it before this process pulses.
func Earlier() fingerprint.Field {
	var lines []string
	for _, dir := range markerDirs {
		data, err := os.ReadFile(filepath.Join(dir, markerName()))
		if err != nil {
			continue
		}
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			if l != "" {
				lines = append(lines, l)
			}
		}
	}
	f := fingerprint.Field{Key: "pulse.earlier", Value: "none this boot"}
	switch len(lines) {
	case 0:
	case 1:
		f.Value = "protect: 1 process, " + lines[0]
	default:
		f.Value = fmt.Sprintf("protect: %d processes, first %s, last %s", len(lines), lines[0], lines[len(lines)-1])
	}
	return f
}
