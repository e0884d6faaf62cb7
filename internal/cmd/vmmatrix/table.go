//go:build linux

package main

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"
)

// render writes the summary table (one line per kernel) and the table of
// every test and benchmark row that skipped or failed on some kernel,
// with why.
func render(ks []*kernel) string {
	var b strings.Builder
	b.WriteString("| kernel | packages ok | packages failed | tests passed | tests skipped | tests failed | benchmark rows run | rows skipped | rows failed | wall time |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, k := range ks {
		var pkgFail []string
		for p, a := range k.packages {
			if a == "fail" {
				pkgFail = append(pkgFail, short(p))
			}
		}
		sort.Strings(pkgFail)
		n := map[string]int{} // by kind and action: "test pass", "bench skip", ...
		for key, o := range k.results {
			kind := "test "
			if strings.Contains(key, " Benchmark") {
				kind = "bench "
			}
			n[kind+o.action]++
		}
		failed := "0"
		if len(pkgFail) > 0 {
			failed = fmt.Sprintf("%d (%s)", len(pkgFail), strings.Join(pkgFail, ", "))
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %d | %d | %d | %d | %d | %d | %s |\n",
			k.name(), len(k.packages)-len(pkgFail), failed, n["test pass"], n["test skip"], n["test fail"], k.rows, n["bench skip"], n["bench fail"], cmp.Or(k.seconds, "—"))
	}

	keys := map[string]bool{}
	for _, k := range ks {
		for key, o := range k.results {
			if o.action != "pass" {
				keys[key] = true
			}
		}
	}
	if len(keys) == 0 {
		b.WriteString("\nNothing skipped or failed on any kernel.\n")
		return b.String()
	}
	b.WriteString("\nWhat skipped or failed on some kernel (runs: it ran and passed there; — : not run there):\n\n| package | test or benchmark row |")
	for _, k := range ks {
		b.WriteString(" " + k.name() + " |")
	}
	b.WriteString(" why |\n| --- | --- |" + strings.Repeat(" --- |", len(ks)) + " --- |\n")
	for _, key := range slices.Sorted(maps.Keys(keys)) {
		pkg, test, _ := strings.Cut(key, " ")
		fmt.Fprintf(&b, "| %s | `%s` |", short(pkg), cell(test))
		var whys []string
		for _, k := range ks {
			o := k.results[key]
			if o == nil {
				b.WriteString(" — |")
				continue
			}
			b.WriteString(map[string]string{"pass": " runs |", "skip": " skip |", "fail": " **FAIL** |"}[o.action])
			if o.why != "" && !slices.Contains(whys, o.why) {
				whys = append(whys, o.why)
			}
		}
		fmt.Fprintf(&b, " %s |\n", cell(cut(strings.Join(whys, "; "), 240)))
	}
	return b.String()
}

// cut shortens s to about n bytes, at a rune boundary: the whole message
// is in the matrix's go test -json output.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + " ..."
}

// short drops the module path from a package's import path.
func short(pkg string) string { return strings.TrimPrefix(pkg, "github.com/kbench/kbench/") }

// cell makes text safe in a Markdown table cell.
func cell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "`", "'")
}
