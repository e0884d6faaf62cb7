//go:build linux

package kprofile

import (
	"bytes"
	"io"
	"os"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/kbench/kbench/internal/procfs"
)

//go:noinline
func elfTarget(n int) int { return n*3 + 1 }

// TestBuildRoundTrip builds a profile from synthetic samples (a kernel
// chain named from the kallsyms fixture, a user chain of this process, one
// of "another process" mapping this test binary, which only its ELF
// symbols can name, and garbage), writes it, reads it back as pprof does,
// and checks names, labels and values.
func TestBuildRoundTrip(t *testing.T) {
	k := loadFixture(t, "testdata/kallsyms", "testdata/modules")
	self := uint32(os.Getpid())
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	maps, err := execMaps(procfs.Host.Maps(os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	target := uint64(reflect.ValueOf(elfTarget).Pointer())
	if _, ok := findMapping(maps, target); !ok {
		t.Fatalf("no executable mapping holds %#x", target)
	}
	goPC := uint64(reflect.ValueOf(TestBuildRoundTrip).Pointer())

	c := newCollector(nil)
	add := func(pid, tid, cpu uint32, mode uint16, n int, chain ...uint64) {
		for range n {
			c.add(sample{mode: mode, pid: pid, tid: tid, cpu: cpu, period: 250000, time: 1, chain: chain})
		}
	}
	// seccomp: JIT'd filter code (no symbol) under __seccomp_filter under
	// do_syscall_64, called from this process's Go code.
	add(self, self, 1, miscKernel, 3, contextKernel, 0xffffffffa0003010, 0xffffffff81001060, 0xffffffff81001900, contextUser, goPC+1)
	add(4242, 4243, 0, miscUser, 2, contextUser, target+4)
	add(4242, 4243, 0, miscUser, 1, contextUser, 0x10)
	sym := &symbolizer{
		kall:  k,
		procs: map[uint32]*procInfo{self: {maps: maps}, 4242: {maps: maps}},
		comms: map[uint32]string{self: "kprofile.test", 4243: "helper"},
		self:  self,
		open: func(pid uint32, m mapping) (io.ReaderAt, error) {
			if pid != 4242 || !strings.HasSuffix(m.Path, exe[strings.LastIndex(exe, "/"):]) {
				t.Errorf("opened %q of pid %d", m.Path, pid)
			}
			return os.Open(exe)
		},
	}
	p := build(c, sym, meta{event: "cpu-clock", hz: 4000, scope: "system-wide", timeNanos: 1, duration: 1e9})
	if err := p.CheckValid(); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if b := buf.Bytes(); len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Fatal("profile is not gzip'd")
	}
	q, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if q.Period != 250000 || q.DefaultSampleType != "cpu" || len(q.SampleType) != 2 {
		t.Errorf("period %d, default %q, %d types", q.Period, q.DefaultSampleType, len(q.SampleType))
	}
	if !slices.ContainsFunc(q.Comments, func(s string) bool { return strings.Contains(s, "4000 Hz") && strings.Contains(s, "system-wide") }) {
		t.Errorf("comments do not say rate and scope: %q", q.Comments)
	}
	stacks := map[string][]int64{}
	for _, s := range q.Sample {
		var names []string
		for _, l := range s.Location {
			for _, ln := range l.Line {
				names = append(names, ln.Function.Name)
			}
		}
		key := strings.Join(names, ";") + " comm=" + s.Label["comm"][0] + " mode=" + s.Label["mode"][0]
		stacks[key] = []int64{s.Value[0], s.Value[1], atoi(s.Label["pid"]), atoi(s.Label["cpu"])}
	}
	testFn := runtime.FuncForPC(uintptr(goPC)).Name()
	want := map[string][]int64{
		unnamedJIT + " called by __seccomp_filter;__seccomp_filter;do_syscall_64;" + testFn + " comm=kprofile.test mode=kernel": {3, 750000, int64(self), 1},
		runtime.FuncForPC(uintptr(target)).Name() + " comm=helper mode=user":                                                    {2, 500000, 4242, 0},
		"[unknown] comm=helper mode=user": {1, 250000, 4242, 0},
	}
	if !reflect.DeepEqual(stacks, want) {
		t.Errorf("stacks\n got %v\nwant %v", stacks, want)
	}
}

func atoi(v []string) int64 {
	if len(v) != 1 {
		return -1
	}
	n, err := strconv.ParseInt(v[0], 10, 64)
	if err != nil {
		return -1
	}
	return n
}
