//go:build linux

// Command vmmatrix reads .ci's kernel matrix (.ci/vm-matrix; docs/vms.md,
// "The kernel matrix"): one go test -json stream per kernel, DIR/LABEL.json,
// its wall time in LABEL.seconds. It writes the table of what runs, skips
// and fails on each kernel and a stream's benchmark text for benchcheck
// (-bench); it runs a package again
// when vmexec -outcome's file names its guest lost (-try) and decides a
// kernel's verdict (-check), both on fields, not by grep. The exit status
// is 0, 1 when a stream could not be read or -check failed, 2 for bad usage.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kbench/kbench/internal/skip"
)

func main() {
	bench := flag.Bool("bench", false, "print the benchmark text of the one stream named, for benchcheck")
	tryCmd := flag.Bool("try", false, "run the command after OUTCOMES, once more when vmexec -outcome's file names a lost guest, and print the stream that stands")
	checkStream := flag.Bool("check", false, "exit 1 when the one stream named failed (a package or test, none passed, another kernel's rows), printing why")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: vmmatrix DIR | vmmatrix -bench FILE.json | vmmatrix -try OUTCOMES CMD [ARGS...] | vmmatrix -check LABEL.json")
		flag.PrintDefaults()
	}
	flag.Parse()
	var err error
	switch {
	case *tryCmd && flag.NArg() >= 2:
		os.Exit(try(flag.Arg(0), flag.Args()[1:], os.Stdout, os.Stderr))
	case *tryCmd || flag.NArg() != 1:
		flag.Usage()
		os.Exit(2)
	case *checkStream:
		os.Exit(check(flag.Arg(0), os.Stdout, os.Stderr))
	case *bench:
		var k *kernel
		if k, err = readStream(flag.Arg(0)); err == nil {
			_, err = io.WriteString(os.Stdout, k.benchText.String())
		}
	default:
		err = run(flag.Arg(0), os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "vmmatrix:", err)
		os.Exit(1)
	}
}

// readStream reads the stream at path, labelled by its file name, with
// its wall time from LABEL.seconds when present.
func readStream(path string) (*kernel, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	k, err := read(strings.TrimSuffix(filepath.Base(path), ".json"), f)
	if b, e := os.ReadFile(strings.TrimSuffix(path, ".json") + ".seconds"); e == nil && err == nil {
		k.seconds = strings.TrimSpace(string(b)) + " s"
	}
	return k, err
}

// run writes the table of the streams in dir to stdout.
func run(dir string, stdout io.Writer) error {
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) == 0 {
		return fmt.Errorf("%s holds no LABEL.json stream", dir)
	}
	var kernels []*kernel
	for _, p := range files {
		k, err := readStream(p)
		if err != nil {
			return err
		}
		kernels = append(kernels, k)
	}
	sort.SliceStable(kernels, func(i, j int) bool { return lessRelease(kernels[i].name(), kernels[j].name()) })
	_, err := io.WriteString(stdout, render(kernels))
	return err
}

// lessRelease orders kernels by release, oldest first; a name that is no
// release (the runner's own kernel, "running") comes last.
func lessRelease(a, b string) bool {
	va, errA := skip.ParseVersion(a)
	vb, errB := skip.ParseVersion(b)
	switch {
	case (errA == nil) != (errB == nil):
		return errA == nil
	case errA == nil && va != vb:
		return va.Less(vb)
	}
	return a < b
}
