//go:build linux

package kprofile

import "golang.org/x/sys/unix"

// This file holds the sampling event's attributes; package perfevent
// opens the events and explains a failed open.

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
