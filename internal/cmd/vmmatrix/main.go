//go:build linux

// Command vmmatrix reads the output of .ci's kernel matrix (.ci/vm-matrix):
// one `go test -json` stream per kernel, the kernel-dependent packages'
// tests and a -benchtime=1x run of their benchmarks in vmexec guests. It
// writes what runs, skips and fails on each kernel as the Markdown table
// of docs/vms.md, or one stream's benchmark output as plain text for
// benchcheck.
//
//	vmmatrix DIR                       # the table, from DIR/LABEL.json (and LABEL.seconds)
//	vmmatrix -doc docs/vms.md DIR      # the same, written into the doc between its markers
//	vmmatrix -bench DIR/LABEL.json     # the benchmark text of one stream, for benchcheck
//	vmmatrix -lost OUTCOMES            # whether a guest was lost, from vmexec -outcome's file
//	vmmatrix -try OUTCOMES CMD ARGS... # run a package's go test -json, again if its guest was lost
//	vmmatrix -check DIR/LABEL.json     # the kernel's verdict: exit 1 where something failed
//
// LABEL is the kernel's name as the matrix gives it (vmlinuz-LABEL); the
// table names each kernel by its guests' kernel.release fingerprint line
// where the stream has one. LABEL.seconds, when present, holds the wall
// time of that kernel's part of the matrix. The exit status is 0, or 1
// when a stream could not be read (2 for bad usage); a failed test is
// the matrix's verdict, not this command's.
//
// -lost reads the file vmexec's -outcome appended to (one JSON line a
// test binary: package vmflags's Outcome) and decides a package's retry
// by vmexec's exit statuses, not its messages: it prints each run whose
// guest died or froze and exits 0 when there was one (retry), 1 when
// there was none (the file missing or empty: none ran), 2 when the file
// cannot be read. -try runs one package's go test command (whose -exec
// vmexec writes OUTCOMES) and runs it once more when a guest was lost,
// printing the stream of the run that stands; -check decides a kernel's
// part of the matrix from its stream: a failed package or test, no
// package passed, or rows from another kernel than LABEL fail it (exit
// 1, each printed). .ci/vm-matrix is these calls in a loop: the retry
// and the verdict are decided here, on fields, not by grep.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kbench/kbench/internal/vmflags"
)

func main() {
	doc := flag.String("doc", "", "write the table into this Markdown file, between its kernel-matrix markers")
	bench := flag.Bool("bench", false, "print the benchmark text of the one stream named, for benchcheck")
	lost := flag.Bool("lost", false, "exit 0 when vmexec -outcome's file names a guest that died or froze (printing each), else 1")
	tryCmd := flag.Bool("try", false, "run the command after OUTCOMES, once more when vmexec -outcome's file names a lost guest, and print the stream that stands")
	checkStream := flag.Bool("check", false, "exit 1 when the one stream named failed (a package or test, none passed, another kernel's rows), printing why")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: vmmatrix [-doc FILE] DIR | vmmatrix -bench FILE.json | vmmatrix -lost OUTCOMES | vmmatrix -try OUTCOMES CMD [ARGS...] | vmmatrix -check LABEL.json")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *tryCmd {
		if flag.NArg() < 2 {
			flag.Usage()
			os.Exit(2)
		}
		os.Exit(try(flag.Arg(0), flag.Args()[1:], os.Stdout, os.Stderr))
	}
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	if *lost {
		os.Exit(lostGuests(flag.Arg(0), os.Stdout, os.Stderr))
	}
	if *checkStream {
		os.Exit(check(flag.Arg(0), os.Stdout, os.Stderr))
	}
	if err := run(flag.Arg(0), *doc, *bench, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "vmmatrix:", err)
		os.Exit(1)
	}
}

func run(arg, doc string, bench bool, stdout io.Writer) error {
	if bench {
		f, err := os.Open(arg)
		if err != nil {
			return err
		}
		defer f.Close()
		k, err := read(filepath.Base(arg), f)
		if err != nil {
			return err
		}
		_, err = io.WriteString(stdout, k.benchText.String())
		return err
	}
	files, err := filepath.Glob(filepath.Join(arg, "*.json"))
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("%s holds no LABEL.json stream", arg)
	}
	var kernels []*kernel
	for _, p := range files {
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		k, err := read(strings.TrimSuffix(filepath.Base(p), ".json"), f)
		f.Close()
		if err != nil {
			return err
		}
		if b, err := os.ReadFile(strings.TrimSuffix(p, ".json") + ".seconds"); err == nil {
			k.seconds = strings.TrimSpace(string(b))
		}
		kernels = append(kernels, k)
	}
	sortKernels(kernels)
	table := render(kernels)
	if doc == "" {
		_, err := io.WriteString(stdout, table)
		return err
	}
	old, err := os.ReadFile(doc)
	if err != nil {
		return err
	}
	updated, err := replaceSection(old, table)
	if err != nil {
		return fmt.Errorf("%s: %v", doc, err)
	}
	return os.WriteFile(doc, updated, 0o644)
}

// lostGuests prints the runs in an -outcome file whose guest died or
// froze; its exit status is -lost's.
func lostGuests(path string, stdout, stderr io.Writer) int {
	outs, err := vmflags.ReadOutcomeFile(path)
	if err != nil {
		fmt.Fprintln(stderr, "vmmatrix:", err)
		return 2
	}
	code := 1
	for _, o := range outs {
		if o.Lost() {
			fmt.Fprintf(stdout, "%s: %s's guest %s (vmexec exit %d): %s\n", o.Dir, filepath.Base(o.Program), o.Outcome, o.Status, o.Why)
			code = 0
		}
	}
	return code
}

// The markers around the generated part of the doc.
const (
	beginMarker = "<!-- kernel matrix: written by go run ./internal/cmd/vmmatrix -doc docs/vms.md DIR; do not edit by hand -->"
	endMarker   = "<!-- end of the kernel matrix -->"
)

// replaceSection puts table between the doc's markers.
func replaceSection(doc []byte, table string) ([]byte, error) {
	b := bytes.Index(doc, []byte(beginMarker))
	e := bytes.Index(doc, []byte(endMarker))
	if b < 0 || e < b {
		return nil, fmt.Errorf("no %q ... %q section", beginMarker, endMarker)
	}
	var out bytes.Buffer
	out.Write(doc[:b+len(beginMarker)])
	out.WriteString("\n\n" + table + "\n")
	out.Write(doc[e:])
	return out.Bytes(), nil
}

// sortKernels orders kernels by release, oldest first (5.10 before 6.1
// before 6.12).
func sortKernels(ks []*kernel) {
	sort.SliceStable(ks, func(i, j int) bool { return lessRelease(ks[i].name(), ks[j].name()) })
}

// A name that is no release (the runner's own kernel, "running") comes
// last.
func lessRelease(a, b string) bool {
	na, nb := releaseNumbers(a), releaseNumbers(b)
	if (len(na) == 0) != (len(nb) == 0) {
		return len(nb) == 0
	}
	for i := 0; i < len(na) && i < len(nb); i++ {
		if na[i] != nb[i] {
			return na[i] < nb[i]
		}
	}
	if len(na) != len(nb) {
		return len(na) < len(nb)
	}
	return a < b
}

// releaseNumbers are the leading dot-separated numbers of a release.
func releaseNumbers(s string) []int {
	var out []int
	n, digits := 0, false
	for _, c := range s {
		switch {
		case c >= '0' && c <= '9':
			if n < 1<<20 {
				n = n*10 + int(c-'0')
			}
			digits = true
		case c == '.' && digits:
			out = append(out, n)
			n, digits = 0, false
		default:
			if digits {
				out = append(out, n)
			}
			return out
		}
	}
	if digits {
		out = append(out, n)
	}
	return out
}
