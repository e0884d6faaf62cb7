//go:build linux

package abfile

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/kbench/kbench/internal/fingerprint"
	"github.com/kbench/kbench/internal/skip"
)

// File is one result file as read.
type File struct {
	Path    string
	Fields  []fingerprint.Field // the fingerprint lines, merged (fingerprint.Merged)
	Results []Result
	// Config holds, per file configuration key ("goos", "pkg"), the
	// distinct values it took and in how many results.
	Config map[string]*ConfigUse
	// Boots lists the ids of the boots that hold a result or an outcome,
	// in order of first appearance; "" stands for the lines above any
	// boot id line.
	Boots    []string
	Outcomes []Outcome // the failures and skips, in line order
	// Pulses are the boots whose fingerprint says protect pulses ran
	// earlier in the boot, or that began with a protect sweep.
	Pulses []Pulse
	// Passed are go test's "ok  \tpkg\t12.3s" lines: the package's wall
	// time in that boot (with -exec vmexec, the VM's boot as well).
	Passed []PkgTime
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
	// Counted is the "# kbench counters:" value of the test binary that
	// printed the result, "" where none.
	Counted string
}

// Kind is what an Outcome says of a row or a test binary.
type Kind int

const (
	// Failed: go test's "--- FAIL: BenchmarkX" (FAIL in the reports).
	Failed Kind = iota + 1
	// Skipped: a skip line (package skip), or go test -v's "--- SKIP".
	Skipped
	// BinaryFailed: go test's "FAIL\tpkg\t0.5s", the test binary failed.
	BinaryFailed
)

// Outcome is one failure or skip: the package's import path, go test's
// name of the row ("BenchmarkX/a=1", with or without the -GOMAXPROCS
// suffix; "" for BinaryFailed), and the skip's reason or the message go
// test printed with the FAIL or --- SKIP line (joined by " / ").
type Outcome struct {
	Kind      Kind
	Pkg, Name string
	Boot      string
	Line      int
	Reason    string
	Parent    bool     // a FAIL of a row whose sub-benchmark failed
	above     []string // the log lines above a --- line, its reason if none follow
}

// Pulse is a boot whose run followed protect pulses (package pulse):
// the pulse.earlier fingerprint value, "" for a run that began with a
// KBENCH_PULSE=protect sweep itself.
type Pulse struct {
	Boot, Earlier string
	Line          int
}

// PkgTime is one package's wall time in one boot, as go test printed it.
type PkgTime struct {
	Pkg, Boot string // Pkg: the import path
	Seconds   float64
}

// maxLine is the longest line a result file may have: benchfmt's
// reader (bufio.Scanner's default) stops at 64 KiB.
const maxLine = 64 * 1024

// Read reads result files in order with one benchfmt reader, as
// benchstat does, so unit metadata accumulates across them. Every error
// names the file and, where one line is at fault, the line and what a
// line there should be.
func Read(paths ...string) ([]*File, benchfmt.UnitMetadataMap, error) {
	data := make([][]byte, len(paths))
	for i, p := range paths {
		var err error
		if data[i], err = os.ReadFile(p); err != nil {
			return nil, nil, err
		}
	}
	return ReadData(paths, data)
}

// ReadData is Read of files' contents, data[i] named paths[i].
func ReadData(paths []string, data [][]byte) ([]*File, benchfmt.UnitMetadataMap, error) {
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

// reader is the state of one file's pass: the lines, the next to take,
// and what is in force there.
type reader struct {
	f         *File
	lines     []string
	next      int
	pkg, boot string
	// inline are the lines where go test printed a FAIL or skip on the
	// row's name line, which benchfmt reads as a syntax error.
	inline map[int]bool
	// msg is the outcome whose message the indented lines below add to;
	// above, the indented lines of no outcome since (go test -v prints a
	// row's log above its --- line).
	msg     *Outcome
	above   []string
	counted string // the counters line of the test binary printing
}

// parse reads one file's contents with rd: benchfmt's records in order,
// each after the lines above it (take), so that a record meets the boot
// and package in force at its line.
func parse(rd *benchfmt.Reader, p string, data []byte) (*File, error) {
	lines, err := splitLines(p, data)
	if err != nil {
		return nil, err
	}
	r := &reader{f: &File{Path: p, Config: map[string]*ConfigUse{}}, lines: lines, inline: map[int]bool{}}
	var all fingerprint.Merged
	take := func(upTo int) { // lines up to line number upTo
		for ; r.next < upTo && r.next < len(r.lines); r.next++ {
			l := r.lines[r.next]
			all.Add(l)
			r.line(r.next+1, l)
		}
	}
	rd.Reset(bytes.NewReader(data), p)
	for rd.Scan() {
		switch rec := rd.Result().(type) {
		case *benchfmt.SyntaxError:
			take(rec.Line)
			if r.inline[rec.Line] {
				continue // a failed row, in Outcomes
			}
			return nil, fmt.Errorf("%v (want a go test -bench result line)", rec)
		case *benchfmt.UnitMetadata:
			_, line := rec.Pos()
			take(line)
		case *benchfmt.Result:
			_, line := rec.Pos()
			take(line)
			if err := measurement(p, line, rec); err != nil {
				return nil, err
			}
			r.result(rec, line)
		}
	}
	if err := rd.Err(); err != nil {
		return nil, err
	}
	take(len(lines))
	r.line(len(lines)+1, "") // ends a message
	r.f.Fields = all.Fields
	markParents(r.f.Outcomes)
	// A file of failures and skips alone is compared: it must list them.
	if len(r.f.Results) == 0 && len(r.f.Outcomes) == 0 {
		return nil, fmt.Errorf("%s: no benchmark results in its %d lines (want `go test -bench` output)", p, len(lines))
	}
	return r.f, nil
}

// splitLines splits a file's contents into lines as bufio.ScanLines
// does, refusing a line longer than benchfmt reads.
func splitLines(p string, data []byte) ([]string, error) {
	if len(data) == 0 {
		return nil, nil
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	for i, l := range lines {
		if len(l) > maxLine {
			return nil, fmt.Errorf("%s:%d: a line of %d bytes: want go test output, whose lines benchfmt reads up to %d KiB", p, i+1, len(l), maxLine/1024)
		}
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines, nil
}

// used lists the boot in force among the file's boots.
func (r *reader) used() {
	if !slices.Contains(r.f.Boots, r.boot) {
		r.f.Boots = append(r.f.Boots, r.boot)
	}
}

// outcome adds an outcome in the boot in force; the indented lines below
// it are its message.
func (r *reader) outcome(o Outcome) {
	o.Boot = r.boot
	r.used()
	r.f.Outcomes = append(r.f.Outcomes, o)
	r.msg = &r.f.Outcomes[len(r.f.Outcomes)-1]
}

// inlineFail and inlineSkip match go test's FAIL and a skip line
// printed on a row's name line (after go test printed its name).
var (
	inlineFail = regexp.MustCompile(`^Benchmark\S*\s+--- FAIL: (Benchmark\S+)`)
	inlineSkip = regexp.MustCompile(`^Benchmark\S*\s+(` + regexp.QuoteMeta(skip.LinePrefix) + `.*)$`)
)

// line takes line n (from 1), l, of the file.
func (r *reader) line(n int, l string) {
	m, indented := strings.CutPrefix(l, "    ")
	if r.msg != nil {
		if indented {
			if r.msg.Reason != "" {
				r.msg.Reason += " / "
			}
			r.msg.Reason += strings.TrimSpace(m)
			return
		}
		if r.msg.Reason == "" {
			r.msg.Reason = strings.Join(r.msg.above, " / ")
		}
		r.msg.above = nil
		r.msg = nil
	}
	if indented {
		r.above = append(r.above, strings.TrimSpace(m))
		return
	}
	above := r.above
	r.above = nil
	if v, ok := strings.CutPrefix(l, fingerprint.Prefix+"counters: "); ok {
		r.counted = v
	} else if l == "PASS" || l == "FAIL" || strings.HasPrefix(l, "ok ") {
		r.counted = "" // the binary ended; the next prints its own fingerprint
	}
	switch {
	case strings.HasPrefix(l, BootIDLine):
		r.boot, _ = BootID(l)
	case strings.HasPrefix(l, fingerprint.Prefix+"pulse.earlier: "):
		if v := strings.TrimPrefix(l, fingerprint.Prefix+"pulse.earlier: "); !strings.HasPrefix(v, "none") {
			r.f.Pulses = append(r.f.Pulses, Pulse{r.boot, v, n})
		}
	case l == fingerprint.Prefix+"pulse.mode: protect":
		r.f.Pulses = append(r.f.Pulses, Pulse{r.boot, "", n})
	case strings.HasPrefix(l, skip.LinePrefix):
		r.skipLine(n, l)
	case inlineSkip.MatchString(l):
		if r.skipLine(n, inlineSkip.FindStringSubmatch(l)[1]) {
			r.inline[n] = true
		}
	case strings.HasPrefix(l, "pkg: "):
		r.pkg = strings.TrimSpace(strings.TrimPrefix(l, "pkg: "))
	case inlineFail.MatchString(l):
		m := inlineFail.FindStringSubmatch(l)
		r.outcome(Outcome{Kind: Failed, Pkg: r.pkg, Name: m[1], Line: n})
		r.inline[n] = true
	case strings.HasPrefix(l, "--- FAIL: "), strings.HasPrefix(l, "--- SKIP: "):
		f := strings.Fields(l)
		if len(f) < 3 {
			return
		}
		kind := Failed
		if f[1] == "SKIP:" {
			kind = Skipped
		}
		r.outcome(Outcome{Kind: kind, Pkg: r.pkg, Name: f[2], Line: n, above: above})
	case strings.HasPrefix(l, "ok "), strings.HasPrefix(l, "ok\t"):
		// "ok  \tgithub.com/x/pkg\t12.345s"; "(cached)" holds no time.
		if f := strings.Fields(l); len(f) >= 3 {
			if d, err := time.ParseDuration(f[2]); err == nil && d > 0 {
				r.f.Passed = append(r.f.Passed, PkgTime{f[1], r.boot, d.Seconds()})
			}
		}
	case strings.HasPrefix(l, "FAIL\t") || strings.HasPrefix(l, "FAIL "):
		// go test's package summary: "FAIL\tgithub.com/x/pkg\t0.5s".
		if f := strings.Fields(l); len(f) >= 2 {
			r.outcome(Outcome{Kind: BinaryFailed, Pkg: f[1], Line: n})
			r.msg = nil
		}
	}
}

// skipLine takes a skip line (package skip) at line n, and reports
// whether it was one.
func (r *reader) skipLine(n int, l string) bool {
	pkg, name, reason, ok := skip.ParseLine(l)
	if ok {
		r.outcome(Outcome{Kind: Skipped, Pkg: pkg, Name: name, Line: n, Reason: reason})
		r.msg = nil
	}
	return ok
}

// result adds a benchmark result at line.
func (r *reader) result(rec *benchfmt.Result, line int) {
	f := r.f
	res := Result{Config: map[string]string{}, Name: string(rec.Name.Full()), Iters: rec.Iters,
		Values: slices.Clone(rec.Values), Boot: r.boot, Line: line, Counted: r.counted}
	r.used()
	for _, c := range rec.Config {
		if !c.File {
			continue
		}
		v := string(c.Value)
		res.Config[c.Key] = v
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
	f.Results = append(f.Results, res)
}

// markParents marks the FAILs of rows that are a parent of another
// FAIL's row in the same package.
func markParents(os []Outcome) {
	parents := map[[2]string]bool{}
	for _, o := range os {
		if o.Kind != Failed {
			continue
		}
		for i, c := range o.Name {
			if c == '/' {
				parents[[2]string{path.Base(o.Pkg), o.Name[:i]}] = true
			}
		}
	}
	for i := range os {
		if os[i].Kind == Failed && parents[[2]string{path.Base(os[i].Pkg), os[i].Name}] {
			os[i].Parent = true
		}
	}
}

// SingleValued reports whether key holds one value in every result of f.
func (f *File) SingleValued(key string) bool {
	u := f.Config[key]
	return u != nil && len(u.Values) == 1 && u.Present == len(f.Results)
}

// IsResult reports whether line is a result line by benchfmt's rule,
// for readers that see go test output a line at a time (vmmatrix).
func IsResult(line string) bool {
	var rd benchfmt.Reader
	rd.Reset(strings.NewReader(line), "")
	for rd.Scan() {
		if _, ok := rd.Result().(*benchfmt.Result); ok {
			return true
		}
	}
	return false
}

// BootIDKey is the fingerprint key of the boot a result file's following
// lines ran in, and BootIDLine starts its line (fingerprint.Collect
// prints it; kbab checks each boot printed a fresh one).
const (
	BootIDKey  = "kernel.boot_id"
	BootIDLine = fingerprint.Prefix + BootIDKey + ": "
)

// BootID returns the boot id a line names, if it is a boot id line.
func BootID(line string) (string, bool) {
	id, ok := strings.CutPrefix(line, BootIDLine)
	return strings.TrimSpace(id), ok
}

// procsSuffix is go test's -GOMAXPROCS suffix of a row's name.
var procsSuffix = regexp.MustCompile(`-[0-9]+$`)

// WithoutProcs is a row's name without go test's -GOMAXPROCS suffix, as
// -bench patterns and a probe run's --- FAIL lines name it.
func WithoutProcs(name string) string { return procsSuffix.ReplaceAllString(name, "") }
