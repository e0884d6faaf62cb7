//go:build linux

package main

import (
	"fmt"
	"os"
	"slices"

	"golang.org/x/perf/benchfmt"

	"github.com/kbench/kbench/internal/fingerprint"
)

// input is one result file as read.
type input struct {
	path    string
	fields  []fingerprint.Field
	results []result
	// config holds, per file configuration key, the distinct values it
	// took and in how many results it was present.
	config map[string]*configUse
	lines  *lineInfo
	// boots lists the boot ids of the results, in order of first
	// appearance; "" stands for results above any kernel.boot_id line.
	boots []string
}

type configUse struct {
	values  []string
	present int
}

// result is one benchmark line with its file configuration.
type result struct {
	config map[string]string
	name   string // full name, as benchstat's .fullname: "Syscall/filters=0-2"
	values []benchfmt.Value
	boot   string // the boot id in force at the result's line
}

// singleValued reports whether key holds one value in every result of in.
func (in *input) singleValued(key string) bool {
	u := in.config[key]
	return u != nil && len(u.values) == 1 && u.present == len(in.results)
}

// sideOf returns 0 for the old file's label, 1 for the new one's.
func sideOf(label string, labels [2]string) int {
	if label == labels[1] {
		return 1
	}
	return 0
}

// readInputs reads both files with one benchfmt.Files, as benchstat does,
// so unit metadata accumulates across them (and a contradiction between
// them is a syntax error); fingerprints are read with fingerprint.Parse.
func readInputs(oldPath, newPath string) ([2]*input, benchfmt.UnitMetadataMap, error) {
	ins := [2]*input{{path: oldPath}, {path: newPath}}
	labels := [2]string{oldPath, newPath}
	if oldPath == newPath { // benchfmt.Files labels a repeated path so
		labels = [2]string{oldPath + "#0", newPath + "#1"}
	}
	for _, in := range ins {
		in.config = map[string]*configUse{}
		f, err := os.Open(in.path)
		if err != nil {
			return ins, nil, err
		}
		in.fields, err = fingerprint.Parse(f)
		f.Close()
		if err != nil {
			return ins, nil, fmt.Errorf("%s: reading fingerprint lines: %w", in.path, err)
		}
		if in.lines, err = scanLines(in.path); err != nil {
			return ins, nil, err
		}
	}
	files := benchfmt.Files{Paths: []string{oldPath, newPath}}
	for files.Scan() {
		switch rec := files.Result().(type) {
		case *benchfmt.SyntaxError:
			if side := sideOf(rec.FileName, labels); ins[side].lines.inline[rec.Line] {
				continue // a failed row, in scanLines' failed list
			}
			return ins, nil, fmt.Errorf("%v (not a go test -bench result line)", rec)
		case *benchfmt.Result:
			in := ins[sideOf(rec.GetConfig(".file"), labels)]
			_, line := rec.Pos()
			r := result{config: map[string]string{}, name: string(rec.Name.Full()), values: slices.Clone(rec.Values), boot: in.lines.bootAt(line)}
			if !slices.Contains(in.boots, r.boot) {
				in.boots = append(in.boots, r.boot)
			}
			for _, c := range rec.Config {
				if !c.File {
					continue
				}
				v := string(c.Value)
				r.config[c.Key] = v
				u := in.config[c.Key]
				if u == nil {
					u = &configUse{}
					in.config[c.Key] = u
				}
				u.present++
				if !slices.Contains(u.values, v) {
					u.values = append(u.values, v)
				}
			}
			in.results = append(in.results, r)
		}
	}
	if err := files.Err(); err != nil {
		return ins, nil, err
	}
	for _, in := range ins {
		// A boot whose rows all failed or skipped is still a boot.
		for _, os := range [][]outcome{in.lines.failed, in.lines.skipped, in.lines.pkgFail} {
			for _, o := range os {
				if !slices.Contains(in.boots, o.boot) {
					in.boots = append(in.boots, o.boot)
				}
			}
		}
		// A file of failures and skips alone is compared: it must list them.
		li := in.lines
		if len(in.results) == 0 && len(li.failed)+len(li.skipped)+len(li.pkgFail) == 0 {
			return ins, nil, fmt.Errorf("%s: no benchmark results (want `go test -bench` output)", in.path)
		}
	}
	return ins, files.Units(), nil
}
