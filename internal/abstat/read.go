//go:build linux

package abstat

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchunit"

	"github.com/kbench/kbench/internal/fingerprint"
	"github.com/kbench/kbench/internal/unit"
)

// File is one result file as read: go test -bench output, one or more
// runs appended (a boot each), with kbench's fingerprint lines.
type File struct {
	Path string
	// Fields are the fingerprint lines, as fingerprint.Parse reads them.
	Fields  []fingerprint.Field
	Results []Result
	// Config holds, per file configuration key ("goos", "cpu", "pkg"),
	// the distinct values it took and in how many results it was present.
	Config map[string]*ConfigUse
	// Boots lists the boot ids of the results and of the failures and
	// skips, in order of first appearance; "" stands for lines above any
	// kernel.boot_id line.
	Boots []string
	lines *lineInfo
}

// ConfigUse is what one configuration key held in a file.
type ConfigUse struct {
	Values  []string
	Present int
}

// Result is one benchmark line with its file configuration.
type Result struct {
	Config map[string]string
	Name   string // full name, as benchstat's .fullname: "Syscall/filters=0-2"
	Iters  int
	Values []benchfmt.Value
	Boot   string // the boot id in force at the result's line
	Line   int
}

// singleValued reports whether key holds one value in every result of f.
func (f *File) singleValued(key string) bool {
	u := f.Config[key]
	return u != nil && len(u.Values) == 1 && u.Present == len(f.Results)
}

// Read reads result files in order with one benchfmt reader, as
// benchstat's benchfmt.Files does, so unit metadata accumulates across
// them (a contradiction between them is an error). Every error names
// the file and, where one line is at fault, the line and what a line
// there should be.
func Read(paths ...string) ([]*File, benchfmt.UnitMetadataMap, error) {
	data := make([][]byte, len(paths))
	for i, p := range paths {
		var err error
		if data[i], err = os.ReadFile(p); err != nil {
			return nil, nil, err
		}
	}
	return readData(paths, data)
}

// readData is Read of files' contents, data[i] named paths[i].
func readData(paths []string, data [][]byte) ([]*File, benchfmt.UnitMetadataMap, error) {
	var rd benchfmt.Reader
	files := make([]*File, len(paths))
	for i, p := range paths {
		var err error
		if files[i], err = parse(&rd, p, data[i]); err != nil {
			return nil, nil, err
		}
	}
	return files, rd.Units(), nil
}

// parse reads one file's contents with rd.
func parse(rd *benchfmt.Reader, p string, data []byte) (*File, error) {
	lines, err := splitLines(p, data)
	if err != nil {
		return nil, err
	}
	f := &File{Path: p, Config: map[string]*ConfigUse{}, lines: scanLines(lines)}
	// Lines are at most maxLine long, well within what Parse reads: it
	// cannot fail.
	if f.Fields, err = fingerprint.Parse(bytes.NewReader(data)); err != nil {
		return nil, fmt.Errorf("%s: reading fingerprint lines: %w", p, err)
	}
	rd.Reset(bytes.NewReader(data), p)
	for rd.Scan() {
		switch rec := rd.Result().(type) {
		case *benchfmt.SyntaxError:
			if f.lines.inline[rec.Line] {
				continue // a failed row, in scanLines' failed list
			}
			return nil, fmt.Errorf("%v (want a go test -bench result line)", rec)
		case *benchfmt.Result:
			_, line := rec.Pos()
			if err := measurement(p, line, rec); err != nil {
				return nil, err
			}
			r := Result{Config: map[string]string{}, Name: string(rec.Name.Full()), Iters: rec.Iters,
				Values: slices.Clone(rec.Values), Boot: f.lines.bootAt(line), Line: line}
			f.addBoot(r.Boot)
			for _, c := range rec.Config {
				if !c.File {
					continue
				}
				v := string(c.Value)
				r.Config[c.Key] = v
				u := f.Config[c.Key]
				if u == nil {
					u = &ConfigUse{}
					f.Config[c.Key] = u
				}
				u.Present++
				if !slices.Contains(u.Values, v) {
					u.Values = append(u.Values, v)
				}
			}
			f.Results = append(f.Results, r)
		}
	}
	if err := rd.Err(); err != nil {
		return nil, err
	}
	// A boot whose rows all failed or skipped is still a boot.
	li := f.lines
	for _, os := range [][]outcome{li.failed, li.skipped, li.pkgFail} {
		for _, o := range os {
			f.addBoot(o.boot)
		}
	}
	// A file of failures and skips alone is compared: it must list them.
	if len(f.Results) == 0 && len(li.failed)+len(li.skipped)+len(li.pkgFail) == 0 {
		return nil, fmt.Errorf("%s: no benchmark results in its %d lines (want `go test -bench` output)", p, li.lines)
	}
	return f, nil
}

func (f *File) addBoot(b string) {
	if n := len(f.Boots); n == 0 || f.Boots[n-1] != b && !slices.Contains(f.Boots, b) {
		f.Boots = append(f.Boots, b)
	}
}

// measurement refuses a result line that holds no measurement: a zero
// (or negative) iteration count, a value that is not a finite number, or
// a negative amount. Each would otherwise be a sample, and NaN one that
// no statistic survives.
func measurement(p string, line int, rec *benchfmt.Result) error {
	if rec.Iters < 1 {
		return fmt.Errorf("%s:%d: iteration count %d is not a measurement: want at least 1 (go test runs a benchmark b.N >= 1 times)",
			p, line, rec.Iters)
	}
	for _, v := range rec.Values {
		orig, u := v.Value, v.Unit
		if v.OrigUnit != "" {
			orig, u = v.OrigValue, v.OrigUnit
		}
		text := strconv.FormatFloat(orig, 'g', -1, 64) + " " + u
		switch {
		case math.IsNaN(v.Value) || math.IsInf(v.Value, 0):
			return fmt.Errorf("%s:%d: %s is not a measurement: want a finite number", p, line, text)
		case v.Value < 0 && Amount(v.Unit):
			return fmt.Errorf("%s:%d: %s is not a measurement: want a value >= 0 (%s is a time, size, count or rate)", p, line, text, v.Unit)
		}
	}
	return nil
}

// Amount reports whether a unit (as benchfmt tidies it) measures an
// amount, which cannot be negative: anything per op or per second (a
// "/" in it), a time or a size (a "sec" or "B" part), and every unit
// kbench declares (internal/unit: rates, latencies, counts). A unit that
// is none of these ("widgets", a custom score) may be negative.
func Amount(u string) bool {
	if strings.Contains(u, "/") {
		return true
	}
	for _, part := range strings.Split(u, "-") {
		if part == "sec" || part == "B" {
			return true
		}
	}
	for k := range unit.Units {
		if _, tidy := benchunit.Tidy(1, k); tidy == u || k == u {
			return true
		}
	}
	return false
}
