package seccompbench

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/kbench/kbench/internal/limits"
	"github.com/kbench/kbench/internal/rate"
	"github.com/kbench/kbench/internal/region"
	"github.com/kbench/kbench/internal/skip"
)

// loadShape is one of BenchmarkLoad's ops.
type loadShape struct {
	name  string
	loads int
	op    func(l *Loader, i uint64, check bool) (int, error)
}

// loadShapes are BenchmarkLoad's ops: stress-ng's whole op, and one load.
var loadShapes = []loadShape{
	{"stress-ng", StressNGLoads, func(l *Loader, i uint64, check bool) (int, error) { return l.Op(i, -1, check) }},
	{"single", 1, (*Loader).Single},
}

// BenchmarkLoad is stress-ng's seccomp stressor: each op is a fresh thread
// that loads filters and exits. loaders=1 runs ops one after another;
// loaders=gomaxprocs runs one loader per GOMAXPROCS, as lkp runs
// stress-ng with nr_threads=100%.
func BenchmarkLoad(b *testing.B) {
	for _, shape := range loadShapes {
		for _, loaders := range []string{"1", "gomaxprocs"} {
			b.Run(fmt.Sprintf("shape=%s/loaders=%s", shape.name, loaders), func(b *testing.B) {
				benchLoad(b, shape, loaders)
			})
		}
	}
}

// benchLoad runs b.N ops of shape with one loader or one per GOMAXPROCS.
func benchLoad(b *testing.B, shape loadShape, loaders string) {
	// One op's thread at a time per loader, holding at most one fd (its
	// /dev/null, or its status file).
	par := 1
	if loaders != "1" {
		par = runtime.GOMAXPROCS(0)
	}
	what := fmt.Sprintf("%d loader(s)", par)
	skip.IfNotSupported(b, limits.Tasks(what, par, fmt.Sprintf("%d loader threads", par)))
	l := newLoader(b)
	b.Cleanup(func() { contained(b) })
	var ops, loads atomic.Int64
	var firstErr atomic.Pointer[error]
	n := uint64(b.N)
	// Each op checks its own loads (so their total needs no
	// check of its own); the first and the last op also read
	// the thread's status file.
	do := func() bool {
		i := uint64(ops.Add(1))
		got, err := shape.op(l, i, i == 1 || i == n)
		loads.Add(int64(got))
		if err == nil && got != shape.loads {
			err = fmt.Errorf("op %d loaded %d filters, want %d", i, got, shape.loads)
		}
		if err != nil {
			err = fmt.Errorf("op %d: %w", i, err)
			firstErr.CompareAndSwap(nil, &err)
			return false
		}
		return true
	}
	r := region.New(b)
	// The instruments' fds are open now.
	skip.IfNotSupported(b, limits.Fds(what, par, fmt.Sprintf("%d loaders x 1", par)))
	r.ResetTimer()
	if loaders == "1" {
		for range b.N {
			if !do() {
				break
			}
		}
	} else {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if !do() {
					return
				}
			}
		})
	}
	r.End()
	if p := firstErr.Load(); p != nil {
		b.Fatal(*p)
	}
	rate.Report(b, ops.Load(), "ops/s")
	rate.Report(b, loads.Load(), "loads/s")
}

// TestLowFdLimit runs the loaders=gomaxprocs row with 64 loaders under
// ulimit -n 32: it must skip naming RLIMIT_NOFILE.
func TestLowFdLimit(t *testing.T) {
	limits.SkipsUnderNofile(t, 32, "^BenchmarkLoad$/^shape=stress-ng$/^loaders=gomaxprocs$", "GOMAXPROCS=64")
}
