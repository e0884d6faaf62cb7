//go:build linux

package abstat

import (
	"bytes"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/kbench/kbench/internal/fingerprint"
)

// BootIDKey is the fingerprint key of the boot a result file's
// following results ran in, and BootIDLine starts its line: each
// benchmark package's TestMain prints it, and boots are told apart by it
// (kbab checks that each of its boots printed a fresh one).
const (
	BootIDKey  = "kernel.boot_id"
	BootIDLine = fingerprint.Prefix + BootIDKey + ": "
)

// maxLine is the longest line a result file may have: benchfmt's
// reader (bufio.Scanner's default) stops at 64 KiB.
const maxLine = 64 * 1024

// lineInfo is what a result file says besides its results and fingerprint
// values: which boot each line belongs to (the last kernel.boot_id line
// above it), which benchmarks failed or skipped, which packages failed,
// and the protect pulses that ran earlier in a boot.
type lineInfo struct {
	bootFrom []bootStart  // in line order
	failed   []outcome    // "--- FAIL: name" lines, on their own or after a row's name
	inline   map[int]bool // lines where go test printed the FAIL on the row's name line
	skipped  []outcome    // "--- SKIP: name" lines (go test -v prints them)
	pkgFail  []outcome    // "FAIL\tpkg\t..." lines: the test binary failed
	pulses   []outcome    // boots with pulse.earlier or a protect pulse.mode; name holds the note
	lines    int          // how many lines the file has
	// passed are go test's "ok  \tpkg\t12.3s" lines: the package's wall
	// time in that boot (with -exec vmexec, the VM's boot as well).
	passed []pkgTime
}

// pkgTime is one package's wall time in one boot, as go test printed it.
type pkgTime struct {
	pkg, boot string // pkg: the import path
	seconds   float64
}

type bootStart struct {
	line int
	boot string
}

// outcome is one failure, skip or note, with the package and boot it
// belongs to.
type outcome struct {
	pkg, name, boot string
	line            int
}

// splitLines splits a file's contents into lines as bufio.ScanLines
// does (a final line without a newline counts, a trailing \r is
// dropped), refusing a line longer than benchfmt reads.
func splitLines(p string, data []byte) ([]string, error) {
	var lines []string
	for n := 1; len(data) > 0; n++ {
		l := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			l, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if len(l) > maxLine {
			return nil, fmt.Errorf("%s:%d: a line of %d bytes: want go test output, whose lines benchfmt reads up to %d KiB", p, n, len(l), maxLine/1024)
		}
		lines = append(lines, string(bytes.TrimSuffix(l, []byte("\r"))))
	}
	return lines, nil
}

// scanLines reads a result file's lines for lineInfo.
func scanLines(lines []string) *lineInfo {
	li := &lineInfo{inline: map[int]bool{}, lines: len(lines)}
	var pkg, boot string
	for i, l := range lines {
		n := i + 1
		switch {
		case strings.HasPrefix(l, BootIDLine):
			if b := strings.TrimSpace(strings.TrimPrefix(l, BootIDLine)); b != boot {
				boot = b
				li.bootFrom = append(li.bootFrom, bootStart{n, b})
			}
		case strings.HasPrefix(l, fingerprint.Prefix+"pulse.earlier: "):
			if v := strings.TrimPrefix(l, fingerprint.Prefix+"pulse.earlier: "); !strings.HasPrefix(v, "none") {
				li.pulses = append(li.pulses, outcome{"", "protect pulses ran earlier in this boot: " + v, boot, n})
			}
		case l == fingerprint.Prefix+"pulse.mode: protect":
			li.pulses = append(li.pulses, outcome{"", "this run began with a KBENCH_PULSE=protect sweep", boot, n})
		case strings.HasPrefix(l, "pkg: "):
			pkg = strings.TrimSpace(strings.TrimPrefix(l, "pkg: "))
		case inlineFail.MatchString(l):
			// A row that failed after go test printed its name (b.Fatal
			// after the probe run of b.N=1): "BenchmarkX/a=1-2 \t--- FAIL:
			// BenchmarkX/a=1-2", the message on the lines below.
			m := inlineFail.FindStringSubmatch(l)
			li.failed = append(li.failed, outcome{path.Base(pkg), m[1], boot, n})
			li.inline[n] = true
		case strings.HasPrefix(l, "--- FAIL: "), strings.HasPrefix(l, "--- SKIP: "):
			f := strings.Fields(l)
			if len(f) < 3 {
				continue
			}
			o := outcome{path.Base(pkg), f[2], boot, n}
			if f[1] == "FAIL:" {
				li.failed = append(li.failed, o)
			} else {
				li.skipped = append(li.skipped, o)
			}
		case strings.HasPrefix(l, "ok "), strings.HasPrefix(l, "ok\t"):
			// "ok  \tgithub.com/x/pkg\t12.345s"; "(cached)" holds no time.
			if f := strings.Fields(l); len(f) >= 3 {
				if d, err := time.ParseDuration(f[2]); err == nil && d > 0 {
					li.passed = append(li.passed, pkgTime{f[1], boot, d.Seconds()})
				}
			}
		case strings.HasPrefix(l, "FAIL\t") || strings.HasPrefix(l, "FAIL "):
			// go test's package summary: "FAIL\tgithub.com/x/pkg\t0.5s".
			if f := strings.Fields(l); len(f) >= 2 {
				li.pkgFail = append(li.pkgFail, outcome{path.Base(f[1]), f[1], boot, n})
			}
		}
	}
	return li
}

// bootAt returns the boot id in force at line n: "" before any.
func (li *lineInfo) bootAt(n int) string {
	i := sort.Search(len(li.bootFrom), func(i int) bool { return li.bootFrom[i].line > n })
	if i == 0 {
		return ""
	}
	return li.bootFrom[i-1].boot
}

// inlineFail matches go test's FAIL printed on a row's name line.
var inlineFail = regexp.MustCompile(`^Benchmark\S*\s+--- FAIL: (Benchmark\S+)`)

var procsSuffix = regexp.MustCompile(`-[0-9]+$`)

// sameBenchmark reports whether go test's name in a --- FAIL or --- SKIP
// line ("BenchmarkX/a=1", no -GOMAXPROCS suffix) names row (benchstat's
// full name, "X/a=1-2").
func sameBenchmark(testName, row string) bool {
	name, ok := strings.CutPrefix(testName, "Benchmark")
	if !ok {
		return false
	}
	return name == row || name == procsSuffix.ReplaceAllString(row, "")
}

// leaves drops the outcomes whose name is a parent of another's: go test
// fails "BenchmarkX" as well when "BenchmarkX/a=2" fails.
func leaves(os []outcome) []outcome {
	parents := map[[2]string]bool{}
	for _, o := range os {
		for i, c := range o.name {
			if c == '/' {
				parents[[2]string{o.pkg, o.name[:i]}] = true
			}
		}
	}
	var out []outcome
	for _, o := range os {
		if !parents[[2]string{o.pkg, o.name}] {
			out = append(out, o)
		}
	}
	return out
}
