//go:build linux

package seccompbench

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/kbench/kbench/internal/region"
	"github.com/kbench/kbench/internal/unit"
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
	r := region.Begin(b)
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
	unit.Report(b, ops.Load(), "ops/s")
	unit.Report(b, loads.Load(), "loads/s")
}
