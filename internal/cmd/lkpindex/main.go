//go:build linux

// Command lkpindex writes the direction lines of kbench's lkp-tests stats,
// generated from kbench's unit table (unit.Units and go test's ns/op), to
// etc/index-perf-all.yaml and etc/index-latency-all.yaml under the lkp
// folder; each file holds kbench's lines only, to be merged into an
// lkp-tests tree (lkp/README.md). Run it
// from the repository root after adding a unit:
//
//	go run ./internal/cmd/lkpindex
//
// With -check it writes nothing and exits 1 when a file differs.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kbench/kbench/internal/lkpstat"
)

func main() {
	dir := flag.String("dir", "lkp", "the lkp folder: the files go to its etc/")
	check := flag.Bool("check", false, "only report files that differ from the generated ones")
	flag.Parse()
	if err := run(*dir, *check); err != nil {
		fmt.Fprintln(os.Stderr, "lkpindex:", err)
		os.Exit(1)
	}
}

// Files returns the generated files by their path under the lkp folder.
func Files() map[string]string {
	perf, latency := lkpstat.Lines()
	return map[string]string{
		"etc/index-perf-all.yaml":    lkpstat.File(perf),
		"etc/index-latency-all.yaml": lkpstat.File(latency),
	}
}

func run(dir string, check bool) error {
	var stale []string
	for name, text := range Files() {
		path := filepath.Join(dir, name)
		if check {
			old, err := os.ReadFile(path)
			if err != nil || !bytes.Equal(old, []byte(text)) {
				stale = append(stale, path)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			return err
		}
	}
	if len(stale) > 0 {
		return fmt.Errorf("%v differ from kbench's units: run go run ./internal/cmd/lkpindex", stale)
	}
	return nil
}
