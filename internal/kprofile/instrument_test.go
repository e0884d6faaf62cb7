//go:build linux

package kprofile

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"github.com/kbench/kbench/internal/region"
)

// TestRegionProfileTimedOnly runs a row through package region with
// KBENCH_PROFILE set: its profile holds the work between Begin (the
// row's ResetTimer) and End, and none from before Begin or while paused.
func TestRegionProfileTimedOnly(t *testing.T) {
	openSampler(t, Options{Hz: 4000}).Close() // skips where refused
	dir := t.TempDir()
	savedDir, savedHz := *profileDir, *profileHz
	*profileDir, *profileHz = dir, 4000
	t.Cleanup(func() { *profileDir, *profileHz = savedDir, savedHz })
	if _, err := region.Setup(); err != nil {
		t.Fatal(err)
	}
	testing.Benchmark(func(b *testing.B) {
		spinBefore(50 * time.Millisecond)
		r := region.Begin(b)
		spinTimed(time.Duration(b.N) * time.Millisecond)
		r.Pause()
		spinPaused(50 * time.Millisecond)
		r.Resume()
		spinAfterReset(time.Duration(b.N) * time.Millisecond)
		r.End()
	})
	files, _ := filepath.Glob(filepath.Join(dir, "*.pb.gz"))
	if len(files) != 1 {
		t.Fatalf("profiles written: %v, want one (every run of the row overwrites it)", files)
	}
	f, err := os.Open(files[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	if n := samplesIn(p, "kprofile.spinTimed") + samplesIn(p, "kprofile.spinAfterReset"); n < 100 {
		t.Errorf("%d samples in the timed phases, want at least 100", n)
	}
	for _, fn := range []string{"kprofile.spinBefore", "kprofile.spinPaused"} {
		if n := samplesIn(p, fn); n != 0 {
			t.Errorf("%d samples of %s, which ran outside the timed region", n, fn)
		}
	}
}

func TestRowName(t *testing.T) {
	for _, c := range []struct {
		name  string
		procs int
		want  string
	}{
		{"BenchmarkSyscall/work=getpid/kind=full/filters=32", 2, "Syscall_work-getpid_kind-full_filters-32-2"},
		{"BenchmarkTCPCRR/ip=4/flows=16/req=1/rsp=1", 1, "TCPCRR_ip-4_flows-16_req-1_rsp-1"},
		{"BenchmarkX/a b:c#01", 4, "X_a_b_c_01-4"},
	} {
		if got := rowName(c.name, c.procs); got != c.want {
			t.Errorf("rowName(%q, %d) = %q, want %q", c.name, c.procs, got, c.want)
		}
	}
}

func TestCheckDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "profiles")
	if err := checkDir(dir); err != nil {
		t.Errorf("a directory that can be created: %v", err)
	}
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	if err := checkDir(file); err == nil {
		t.Error("a regular file accepted as the profile directory")
	}
	if err := checkDir(filepath.Join(file, "sub")); err == nil {
		t.Error("a directory under a regular file accepted")
	}
}

func TestFileNames(t *testing.T) {
	for _, c := range []struct {
		name      string
		pkg, stem string
		run       int
	}{
		{"seccompbench.Syscall_work-getpid_kind-full_filters-32-2.run3.pb.gz", "seccompbench", "Syscall_work-getpid_kind-full_filters-32-2", 3},
		{"netbench.TCPCRR_size-1.5.run_x.run10.pb.gz", "netbench", "TCPCRR_size-1.5.run_x", 10},
	} {
		pkg, stem, run, ok := ParseFileName(c.name)
		if !ok || pkg != c.pkg || stem != c.stem || run != c.run {
			t.Errorf("ParseFileName(%q) = %q, %q, %d, %v; want %q, %q, %d", c.name, pkg, stem, run, ok, c.pkg, c.stem, c.run)
		}
	}
	for _, bad := range []string{"seccompbench.X.run0.pb.gz", "seccompbench.X.run01.pb.gz", "seccompbench.X.pb.gz",
		"seccompbench.X.run1.pb", ".X.run1.pb.gz", "seccompbench.X=1.run1.pb.gz", "seccompbench..run1.pb.gz"} {
		if _, _, _, ok := ParseFileName(bad); ok {
			t.Errorf("ParseFileName(%q) accepted a name FileName never writes", bad)
		}
	}
	if got := FileName("seccompbench", RowStem("Syscall/work=getpid-2"), 1); got != "seccompbench.Syscall_work-getpid-2.run1.pb.gz" {
		t.Errorf("FileName = %q", got)
	}
	s := Sampling{"cpu-clock", 4000, "system-wide"}
	p := &profile.Profile{Comments: []string{"other", s.Header()}}
	if got, ok := ReadSampling(p); !ok || got != s {
		t.Errorf("ReadSampling of %q = %+v, %v", s.Header(), got, ok)
	}
	if n, ok := ReadOps(p); ok {
		t.Errorf("ReadOps of a profile without ops = %d", n)
	}
	p.Comments = append(p.Comments, OpsComment(37))
	if n, ok := ReadOps(p); !ok || n != 37 {
		t.Errorf("ReadOps of %q = %d, %v", p.Comments, n, ok)
	}
	if n, ok := ReadOps(&profile.Profile{Comments: []string{OpsComment(3), OpsComment(4)}}); ok {
		t.Errorf("ReadOps of two counts that disagree = %d, want none", n)
	}
}
