//go:build linux

package kprofile

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"
)

// Sampling is how a profile's samples were taken, as the first comment
// of every profile kprofile writes says ("kbench kernel profile:
// cpu-clock sampled at 4000 Hz, system-wide, ..."), so that a reader of
// the profile alone can name the event and rate (pprof's period type
// says "cpu nanoseconds" for cpu-clock, not the event).
type Sampling struct {
	Event string `json:"event"` // "cycles" or "cpu-clock"
	Hz    int    `json:"hz"`    // samples per second per CPU
	Scope string `json:"scope"` // "system-wide" or the process's, as Sampler.Scope
}

const (
	headerPrefix = "kbench kernel profile: "
	headerSuffix = ", idle excluded, timed region only"
)

// Header is the comment kprofile writes for s.
func (s Sampling) Header() string {
	return fmt.Sprintf("%s%s sampled at %d Hz, %s%s", headerPrefix, s.Event, s.Hz, s.Scope, headerSuffix)
}

// ReadSampling finds the header among p's comments; ok is false where
// none is kprofile's.
func ReadSampling(p *profile.Profile) (s Sampling, ok bool) {
	for _, c := range p.Comments {
		if s, ok := parseHeader(c); ok {
			return s, true
		}
	}
	return Sampling{}, false
}

// parseHeader reads the comment that Sampling.header writes.
func parseHeader(c string) (Sampling, bool) {
	rest, ok := strings.CutPrefix(c, headerPrefix)
	if !ok {
		return Sampling{}, false
	}
	rest, ok = strings.CutSuffix(rest, headerSuffix)
	event, rest, ok2 := strings.Cut(rest, " sampled at ")
	hz, scope, ok3 := strings.Cut(rest, " Hz, ")
	n, err := strconv.Atoi(hz)
	if !ok || !ok2 || !ok3 || err != nil || n <= 0 || hz != strconv.Itoa(n) || event == "" || scope == "" ||
		strings.Contains(event, " ") {
		return Sampling{}, false
	}
	s := Sampling{event, n, scope}
	if s.Header() != c {
		return Sampling{}, false
	}
	return s, true
}
