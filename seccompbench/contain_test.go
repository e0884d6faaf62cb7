//go:build linux

package seccompbench

import (
	"flag"
	"testing"

	"github.com/kbench/kbench/internal/unixbench"
)

// TestBenchmarkBodiesContained runs each benchmark body briefly and checks
// that no filter or no_new_privs bit reached the main thread or a fresh
// thread, and that the bodies' own checks passed.
func TestBenchmarkBodiesContained(t *testing.T) {
	skipUnsupported(t)
	old := flag.Lookup("test.benchtime").Value.String()
	if err := flag.Set("test.benchtime", "50x"); err != nil {
		t.Fatal(err)
	}
	defer flag.Set("test.benchtime", old)

	bodies := map[string]func(b *testing.B){
		"syscall/full/4":   func(b *testing.B) { benchSyscall(b, unixbench.Mix, Full, 4) },
		"syscall/cached/1": func(b *testing.B) { benchSyscall(b, unixbench.Getpid, Cached, 1) },
		"load/stress-ng": func(b *testing.B) {
			l := newLoader(b)
			for i := range uint64(b.N) {
				if n, err := l.Op(i, -1, i == 0); err != nil || n != StressNGLoads {
					b.Fatalf("op %d: %d loads, %v", i, n, err)
				}
			}
		},
	}
	for name, body := range bodies {
		r := testing.Benchmark(body)
		if r.N == 0 {
			t.Fatalf("%s: the body failed or skipped (see its log)", name)
		}
		contained(t)
	}
}
