//go:build linux

package kprofile

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/kbench/kbench/internal/skip"
	"golang.org/x/sys/unix"
)

// This file holds the sampling event's attributes and explains a
// refusal; package perfevent opens the events.

// samplingAttr is the attr of a sampling event at hz per CPU.
func samplingAttr(typ uint32, config uint64, hz int, inherit bool) *unix.PerfEventAttr {
	attr := &unix.PerfEventAttr{
		Type:        typ,
		Config:      config,
		Sample:      uint64(hz),
		Sample_type: sampleType,
		Bits: unix.PerfBitDisabled | unix.PerfBitFreq | unix.PerfBitExcludeIdle |
			unix.PerfBitExcludeHv | unix.PerfBitUseClockID,
		Clockid: unix.CLOCK_MONOTONIC,
	}
	if inherit {
		attr.Bits |= unix.PerfBitInherit
	}
	return attr
}

// refused explains an error from perf_event_open.
func refused(what string, err error) error {
	if errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM) {
		return &skip.Unsupported{
			Feature: what,
			Err:     err,
			Hint: fmt.Sprintf("kernel.perf_event_paranoid is %s; kernel call chains need root or CAP_PERFMON (Linux 5.8+; CAP_SYS_ADMIN before), or perf_event_paranoid <= 1 for the test process alone",
				readTrim("/proc/sys/kernel/perf_event_paranoid")),
		}
	}
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENODEV) || errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS) {
		return &skip.Unsupported{Feature: what, Err: err, Hint: "this kernel or machine has no such perf event (CONFIG_PERF_EVENTS)"}
	}
	if errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("%s: %s; is the rate above kernel.perf_event_max_sample_rate (%s)?", what, skip.Errno(err),
			readTrim("/proc/sys/kernel/perf_event_max_sample_rate"))
	}
	return fmt.Errorf("%s: %s", what, skip.Errno(err))
}

func readTrim(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "unreadable"
	}
	return strings.TrimSpace(string(b))
}
