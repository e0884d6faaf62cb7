//go:build linux

package kprofile

import (
	"strconv"
	"strings"

	"github.com/google/pprof/profile"
)

// A profile covers one run of a row's timed region; the run's op count
// (its b.N) says how many operations the samples are spread over, so that
// a reader can weigh a function per op (its samples times the period,
// over the ops) rather than as a share of the samples, which a change of
// one function moves for every other. pprof has no field for it: the
// count goes in a comment of its own, which `go tool pprof -comments`
// prints.

const opsPrefix = "kbench ops: "
const opsSuffix = " (the run's b.N: the operations its timed region covers)"

// OpsComment is the comment that records a run's op count.
func OpsComment(ops int64) string {
	return opsPrefix + strconv.FormatInt(ops, 10) + opsSuffix
}

// ReadOps finds the op count among p's comments; ok is false where no
// comment is OpsComment's (a profile written before kprofile recorded
// it, or not kprofile's), or where two disagree.
func ReadOps(p *profile.Profile) (ops int64, ok bool) {
	for _, c := range p.Comments {
		n, found := parseOps(c)
		if !found {
			continue
		}
		if ok && n != ops {
			return 0, false
		}
		ops, ok = n, true
	}
	return ops, ok
}

// parseOps reads exactly what OpsComment writes, a count of at least 1.
func parseOps(c string) (int64, bool) {
	rest, ok := strings.CutPrefix(c, opsPrefix)
	if !ok {
		return 0, false
	}
	digits, ok := strings.CutSuffix(rest, opsSuffix)
	n, err := strconv.ParseInt(digits, 10, 64)
	if !ok || err != nil || n < 1 || OpsComment(n) != c {
		return 0, false
	}
	return n, true
}
