//go:build linux

package main

import (
	"fmt"
	"strings"

	"github.com/kbench/kbench/internal/abfile"
	"github.com/kbench/kbench/internal/counters"
)

// checkCounters checks that every result row reports the counters its
// test binary's fingerprint says were counted ("# kbench counters: ...",
// abfile's Result.Counted), so a row that lost its region shows. Rows of
// a binary without the line (counters off, or an older kbench) are not
// checked.
func checkCounters(f *abfile.File) []string {
	var problems []string
	for _, res := range f.Results {
		units := map[string]bool{}
		for _, v := range res.Values {
			units[v.Unit], units[v.OrigUnit] = true, true
		}
		for _, u := range counters.ReportedUnits(res.Counted) {
			if !hasUnit(units, u) {
				problems = append(problems, fmt.Sprintf("row Benchmark%s lacks counter unit %s (its binary's fingerprint says it was counted)", res.Name, u))
			}
		}
	}
	return problems
}

func hasUnit(units map[string]bool, u string) bool {
	if !strings.HasSuffix(u, "-") {
		return units[u]
	}
	for have := range units {
		if have != "" && strings.HasPrefix(have, u) {
			return true
		}
	}
	return false
}
