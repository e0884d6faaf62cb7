//go:build linux

package kprofile

import (
	"cmp"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/kbench/kbench/internal/skip"
)

// ProfileRows runs this test binary again for the benchmarks that the
// -test.bench pattern bench matches, once each for benchtime, with
// KBENCH_PROFILE set to a fresh directory and env added, and returns the
// profiles it wrote by file name, and the child's pid. It skips tb where
// the machine refuses kernel sampling. For tests of what a row's profile
// shows. Every profile must carry its run's op count (ReadOps).
func ProfileRows(tb testing.TB, bench, benchtime string, env ...string) (map[string]*profile.Profile, int) {
	tb.Helper()
	s, err := Open(Options{Hz: 4000})
	skip.IfNotSupported(tb, err)
	s.Close()
	dir := tb.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$", "-test.bench="+bench, "-test.benchtime="+benchtime, "-test.count=1")
	cmd.Env = append(os.Environ(), "KBENCH_PROFILE="+dir)
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		tb.Fatalf("%v: %v\n%s", cmd, err, out)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.pb.gz"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("%v wrote no profile (%v)\n%s", cmd, err, out)
	}
	profiles := map[string]*profile.Profile{}
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			tb.Fatal(err)
		}
		p, err := profile.Parse(f)
		f.Close()
		if err != nil {
			tb.Fatalf("%s: %v", name, err)
		}
		if _, ok := ReadOps(p); !ok {
			tb.Fatalf("%s carries no op count (%q)", name, p.Comments)
		}
		profiles[filepath.Base(name)] = p
	}
	return profiles, cmd.Process.Pid
}

// Weight is a function's share of a profile.
type Weight struct {
	Name  string
	Flat  int64 // samples where it is the innermost frame
	Cum   int64 // samples with it anywhere on the stack
	Total int64 // samples considered
}

// KernelFunctions sums the samples of pid (-1: every pid) by kernel
// function, heaviest flat first.
func KernelFunctions(p *profile.Profile, pid int) []Weight {
	want := strconv.Itoa(pid)
	return Weigh(p, func(s *profile.Sample) bool {
		return pid < 0 || len(s.Label["pid"]) == 1 && s.Label["pid"][0] == want
	}, KernelFrame, 0)
}

// KernelMapping is the file of the mapping every kernel frame of a
// profile kprofile writes lies in, as perf names it.
const KernelMapping = "[kernel.kallsyms]"

// KernelFrame reports whether l is a kernel frame (JIT'd BPF, which
// kallsyms does not name, included).
func KernelFrame(l *profile.Location) bool {
	return l.Mapping != nil && l.Mapping.File == KernelMapping
}

// Weigh sums value (an index into each sample's Value) of the samples
// keep takes (nil: all) by the function of the frames frame takes: Flat
// where the function is the innermost frame's (its innermost inlined
// call), Cum where it is anywhere on the stack, once a sample. Total is
// the value of the samples kept, whatever their frames. Heaviest flat
// first.
func Weigh(p *profile.Profile, keep func(*profile.Sample) bool, frame func(*profile.Location) bool, value int) []Weight {
	ws := map[string]*Weight{}
	var total int64
	for _, s := range p.Sample {
		if keep != nil && !keep(s) || value >= len(s.Value) {
			continue
		}
		n := s.Value[value]
		total += n
		seen := map[string]bool{}
		for i, l := range s.Location {
			if !frame(l) {
				continue
			}
			for j, ln := range l.Line {
				if ln.Function == nil {
					continue
				}
				name := ln.Function.Name
				w := ws[name]
				if w == nil {
					w = &Weight{Name: name}
					ws[name] = w
				}
				if i == 0 && j == 0 {
					w.Flat += n
				}
				if !seen[name] {
					seen[name] = true
					w.Cum += n
				}
			}
		}
	}
	out := make([]Weight, 0, len(ws))
	for _, w := range ws {
		w.Total = total
		out = append(out, *w)
	}
	slices.SortFunc(out, func(a, b Weight) int {
		return cmp.Or(cmp.Compare(b.Flat, a.Flat), cmp.Compare(b.Cum, a.Cum), cmp.Compare(a.Name, b.Name))
	})
	return out
}
