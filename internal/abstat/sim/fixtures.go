//go:build linux

// Package sim holds the real result files the statistics are tested on
// (testdata/README.md) and draws comparisons from them: runs of one row
// that Assemble joins into files of several boots, and a run of the
// whole suite from which Suite draws boots. Only the tests of several
// packages import it; what one package's tests alone use is theirs.
package sim

import (
	"embed"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/abfile"
)

//go:embed testdata/*.txt
var testdata embed.FS

// Data returns a fixture's contents.
func Data(t testing.TB, name string) []byte {
	t.Helper()
	b, err := testdata.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// File writes a fixture into a test's temporary directory.
func File(t testing.TB, name string) string {
	t.Helper()
	return write(t, name, Data(t, name))
}

func write(t testing.TB, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// SyscallRow is the row of the Syscall fixtures (testdata/README.md).
const SyscallRow = "Syscall/work=getpid/kind=cached/filters=0-2"

// Boot ids for assembled files: three boots of A, B and C, and one boot
// of three runs.
var (
	BootsA = []string{"aaaaaaaa-0000-4000-8000-000000000001", "aaaaaaaa-0000-4000-8000-000000000002", "aaaaaaaa-0000-4000-8000-000000000003"}
	BootsB = []string{"bbbbbbbb-0000-4000-8000-000000000001", "bbbbbbbb-0000-4000-8000-000000000002", "bbbbbbbb-0000-4000-8000-000000000003"}
	BootsC = []string{"cccccccc-0000-4000-8000-000000000001", "cccccccc-0000-4000-8000-000000000002", "cccccccc-0000-4000-8000-000000000003"}
	OneA   = []string{BootsA[0], BootsA[0], BootsA[0]}
	OneB   = []string{BootsB[0], BootsB[0], BootsB[0]}
)

// BootFile is one real run standing for one boot: a testdata file, the
// boot id written into it, a factor of its sec/op samples (its loops/s
// divided; 0 is 1), and an edit of the assembled file.
type BootFile struct {
	File, Boot string
	Scale      float64
	Edit       func(string) string
}

// BootFiles are the Syscall runs syscall-PREFIX-runN.txt, one per boot
// id, scaled by scales (nil: unscaled).
func BootFiles(prefix string, boots []string, scales []float64) []BootFile {
	var rs []BootFile
	for i, b := range boots {
		r := BootFile{File: fmt.Sprintf("syscall-%s-run%d.txt", prefix, i+1), Boot: b}
		if scales != nil {
			r.Scale = scales[i]
		}
		rs = append(rs, r)
	}
	return rs
}

// Assemble concatenates runs into one result file, as `tee -a` across
// boots would.
func Assemble(t testing.TB, name string, runs ...BootFile) string {
	t.Helper()
	var b strings.Builder
	for _, r := range runs {
		var n int
		for _, l := range strings.SplitAfter(string(Data(t, r.File)), "\n") {
			if strings.HasPrefix(l, abfile.BootIDLine) {
				l = abfile.BootIDLine + r.Boot + "\n"
				n++
			}
			if r.Scale != 0 && strings.HasPrefix(l, "Benchmark") {
				l = scaleLine(t, l, r.Scale)
			}
			b.WriteString(l)
		}
		if n != 1 {
			t.Fatalf("%s: %d kernel.boot_id lines, want 1", r.File, n)
		}
	}
	out := b.String()
	for _, r := range runs {
		if r.Edit != nil {
			out = r.Edit(out)
		}
	}
	return write(t, name, []byte(out))
}

// scaleLine multiplies a result line's ns/op by f and divides its loops/s.
func scaleLine(t testing.TB, l string, f float64) string {
	t.Helper()
	fields := strings.Fields(l)
	for i := 2; i+1 < len(fields); i += 2 {
		v, err := strconv.ParseFloat(fields[i], 64)
		if err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		switch fields[i+1] {
		case "ns/op":
			v *= f
		case "loops/s":
			v /= f
		default:
			t.Fatalf("%q: unit %s", l, fields[i+1])
		}
		fields[i] = strconv.FormatFloat(v, 'g', 6, 64)
	}
	return strings.Join(fields, "\t") + "\n"
}

// ErrorForm is what every error of abfile.Read must look like.
func ErrorForm(p string) *regexp.Regexp {
	return regexp.MustCompile(`^` + regexp.QuoteMeta(p) + `(:[1-9][0-9]*)?: .*want`)
}
