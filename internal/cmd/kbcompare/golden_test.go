//go:build linux

package main

import (
	"bytes"
	"crypto/sha256"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/*/*.golden from the code as it is")

// goldenForms are kbcompare's outputs of a pair of files, each a
// command line before the files (plan-old: -plan of the old file alone).
var goldenForms = map[string][]string{
	"text":     {"-format", "text"},
	"brief":    {"-format", "brief"},
	"json":     {"-format", "json"},
	"plan":     {"-plan"},
	"plan-old": {"-plan"},
	"plot":     nil,
}

// TestGolden runs every form of kbcompare on each set of
// testdata/golden (README.md there says where each comes from) and
// compares stdout, stderr and the exit status, and for -plot the files
// it writes, with the set's .golden files; -update rewrites them.
func TestGolden(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("testdata", "golden", "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no golden sets: %v", err)
	}
	for _, dir := range dirs {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			continue
		}
		t.Run(filepath.Base(dir), func(t *testing.T) {
			if strings.HasPrefix(filepath.Base(dir), "series-") {
				goldenSeries(t, dir)
				return
			}
			files := []string{filepath.Join(dir, "old.txt"), filepath.Join(dir, "new.txt")}
			var prof []string
			if _, err := os.Stat(filepath.Join(dir, "profiles-old")); err == nil {
				prof = []string{"-profiles-old", filepath.Join(dir, "profiles-old"), "-profiles-new", filepath.Join(dir, "profiles-new")}
			}
			for form, args := range goldenForms {
				switch form {
				case "plot":
					checkGolden(t, filepath.Join(dir, form+".golden"), plotOutput(t, append(prof, files...)))
				case "plan", "plan-old":
					in := files
					if form == "plan-old" {
						in = files[:1]
					}
					checkGolden(t, filepath.Join(dir, form+".golden"), runOutput(append(slices.Clone(args), in...)))
				default:
					checkGolden(t, filepath.Join(dir, form+".golden"), runOutput(slices.Concat(args, prof, files)))
				}
			}
		})
	}
}

// goldenSeries checks -series' forms on the kernels' files of dir.
func goldenSeries(t *testing.T, dir string) {
	files, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil || len(files) < 2 {
		t.Fatalf("series %s: %v", dir, files)
	}
	for _, form := range []string{"text", "json"} {
		checkGolden(t, filepath.Join(dir, form+".golden"), runOutput(slices.Concat([]string{"-series", "-format", form}, files)))
	}
	checkGolden(t, filepath.Join(dir, "plot.golden"), plotOutput(t, append([]string{"-series"}, files...)))
}

// runOutput is kbcompare's stdout, its stderr and its exit status.
func runOutput(args []string) []byte {
	var out, errOut bytes.Buffer
	code := run(args, &out, &errOut)
	if errOut.Len() > 0 {
		out.WriteString("-- stderr --\n")
		out.Write(errOut.Bytes())
	}
	fmt.Fprintf(&out, "-- exit %d --\n", code)
	return out.Bytes()
}

// plotOutput runs kbcompare -plot DIR args and gives its stderr and exit
// status (its stdout is the text form's) and lists what it wrote: each
// file with the SHA-256 of its contents.
func plotOutput(t *testing.T, args []string) []byte {
	dir := t.TempDir()
	var errOut bytes.Buffer
	code := run(append([]string{"-plot", dir}, args...), io.Discard, &errOut)
	out := fmt.Appendf(bytes.ReplaceAll(errOut.Bytes(), []byte(dir), []byte("$PLOT")), "-- exit %d --\n", code)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		out = fmt.Appendf(out, "%s %x\n", d.Name(), sha256.Sum256(b))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// checkGolden compares got with the file golden, or with -update
// writes it.
func checkGolden(t *testing.T, golden string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test -run TestGolden -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs; got:\n%s", golden, got)
	}
}
