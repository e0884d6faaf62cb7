//go:build linux

package main

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/kbench/kbench/internal/counters"
	"github.com/kbench/kbench/internal/fingerprint"
)

// checkCounters checks that every result row reports the counters its
// test binary's fingerprint says were counted ("# kbench counters: ..."),
// so a row that lost its region shows. Rows of a binary without the line
// (counters off, or an older kbench) are not checked.
func checkCounters(r io.Reader) ([]string, error) {
	var problems []string
	var want []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, fingerprint.Prefix+"counters: "); ok {
			want = counters.ReportedUnits(v)
			continue
		}
		if line == "PASS" || line == "FAIL" || strings.HasPrefix(line, "ok ") {
			want = nil // the test binary ended; the next prints its own fingerprint
		}
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") || len(f)%2 != 0 {
			continue
		}
		units := map[string]bool{}
		for i := 3; i < len(f); i += 2 {
			units[f[i]] = true
		}
		for _, u := range want {
			if !hasUnit(units, u) {
				problems = append(problems, fmt.Sprintf("row %s lacks counter unit %s (its binary's fingerprint says it was counted)", f[0], u))
			}
		}
	}
	return problems, sc.Err()
}

func hasUnit(units map[string]bool, u string) bool {
	if !strings.HasSuffix(u, "-") {
		return units[u]
	}
	for have := range units {
		if strings.HasPrefix(have, u) {
			return true
		}
	}
	return false
}
