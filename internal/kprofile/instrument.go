//go:build linux

package kprofile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/kbench/kbench/internal/fingerprint"
	"github.com/kbench/kbench/internal/options"
	"github.com/kbench/kbench/internal/procfs"
	"github.com/kbench/kbench/internal/region"
)

// This file makes the sampler an instrument of every row's timed region
// (package region): with KBENCH_PROFILE=DIR, each run of each row writes
// DIR/<package>.<row>.run<k>.pb.gz.

var (
	profileDir = options.String("KBENCH_PROFILE", "a directory that exists or can be created, writable", "", checkDir,
		"every test binary: a pprof profile of each row's timed region, per `-count` run, in this directory (unset: no profiles; [profiles.md](profiles.md))")
	profileHz = options.Int("KBENCH_PROFILE_HZ", "4000", 10, 100000,
		"samples per second per CPU for `KBENCH_PROFILE`, at most `kernel.perf_event_max_sample_rate`")
)

// checkDir accepts a directory kbench can write a file into, creating it
// (and its parents) if missing.
func checkDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("cannot create it: %v", errors.Unwrap(err))
	}
	f, err := os.CreateTemp(dir, ".kbench-write-check-*")
	if err != nil {
		return fmt.Errorf("cannot write into it: %v", errors.Unwrap(err))
	}
	f.Close()
	return os.Remove(f.Name())
}

func init() { region.Register(provider{}) }

type provider struct{}

func (provider) Name() string { return "profile" }

// Setup checks that the machine lets this user sample the kernel at the
// asked rate, once per test binary, and records how it will sample.
func (provider) Setup() ([]fingerprint.Field, error) {
	if *profileDir == "" {
		return nil, nil
	}
	hz := *profileHz
	if max, err := procfs.Host.SysctlInt("kernel.perf_event_max_sample_rate"); err == nil && hz > max {
		return nil, fmt.Errorf("KBENCH_PROFILE_HZ=%d is above kernel.perf_event_max_sample_rate (%d); the kernel lowers that limit itself when sampling interrupts run long", hz, max)
	}
	s, err := Open(Options{Hz: hz})
	if err != nil {
		return nil, fmt.Errorf("KBENCH_PROFILE is set, but this machine refuses kernel sampling: %w", err)
	}
	defer s.Close()
	note := ""
	if k, msg, _ := kallsyms(true); k == nil || k.Zeroed {
		note = "; " + msg
	}
	return []fingerprint.Field{{
		Key:   "profile.sampling",
		Value: fmt.Sprintf("%s at %d Hz per CPU, %s, timed regions only%s", s.Event(), hz, s.Scope(), note),
	}}, nil
}

// runs numbers each row's -count runs: testing gives every one of them
// its own *testing.B, which the runs it makes to find b.N share.
var runs struct {
	sync.Mutex
	seen map[string][]*testing.B
}

func runNumber(row string, b *testing.B) int {
	runs.Lock()
	defer runs.Unlock()
	if runs.seen == nil {
		runs.seen = map[string][]*testing.B{}
	}
	for i, x := range runs.seen[row] {
		if x == b {
			return i + 1
		}
	}
	runs.seen[row] = append(runs.seen[row], b)
	return len(runs.seen[row])
}

func (provider) Open(b *testing.B) (region.Instrument, error) {
	if *profileDir == "" {
		return nil, nil
	}
	s, err := Open(Options{Hz: *profileHz})
	if err != nil {
		return nil, err
	}
	row := rowName(b.Name(), runtime.GOMAXPROCS(0))
	path := filepath.Join(*profileDir, FileName(binaryName(), row, runNumber(row, b)))
	return &instrument{s: s, path: path}, nil
}

// rowName is the row as go test prints it (Benchmark dropped, -GOMAXPROCS
// added when not 1), made a file name by RowStem.
func rowName(name string, procs int) string {
	name = strings.TrimPrefix(name, "Benchmark")
	if procs != 1 {
		name += "-" + strconv.Itoa(procs)
	}
	return RowStem(name)
}

// binaryName is the package's test binary name without ".test"
// ("seccompbench"), so that one DIR serves a go test ./... run.
func binaryName() string {
	return strings.TrimSuffix(filepath.Base(os.Args[0]), ".test")
}

type instrument struct {
	s    *Sampler
	path string
}

func (i *instrument) Start() error { return i.s.Start() }
func (i *instrument) Stop() error  { return i.s.Stop() }
func (i *instrument) Reset() error { i.s.Reset(); return nil }
func (i *instrument) Close() error { return i.s.Close() }

// Report writes the run's profile with its op count (OpsComment), so
// that a reader can weigh its samples per op. Every run of a row writes
// its file; the last, whose result go test prints, is the one left, with
// that run's ops.
func (i *instrument) Report(ops int64, r region.Reporter) {
	p, err := i.s.Profile()
	if err == nil {
		p.Comments = append(p.Comments, OpsComment(ops))
		err = writeProfile(i.path, p)
	}
	if err != nil {
		r.Log("no profile:", err)
		return
	}
	if n, lost := i.s.Lost(); lost > 0 {
		r.Log(fmt.Sprintf("%s: the kernel dropped %d of %d samples", i.path, lost, n+lost))
	}
}

// writeProfile writes p gzip'd to path through a temporary file, so a
// reader never sees half a profile.
func writeProfile(path string, p interface{ Write(io.Writer) error }) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".kbench-profile-*")
	if err != nil {
		return err
	}
	if err := p.Write(f); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	return os.Rename(f.Name(), path)
}
