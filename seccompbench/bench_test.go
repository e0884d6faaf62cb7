//go:build linux

package seccompbench

import (
	"fmt"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/kbench/kbench/internal/limits"
	"github.com/kbench/kbench/internal/region"
	"github.com/kbench/kbench/internal/skip"
	"github.com/kbench/kbench/internal/unit"
	"github.com/kbench/kbench/internal/unixbench"
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
	// loaders=1 runs under b.Loop, which does not say in advance which
	// op is the last; there last is 0 and one more op, untimed and not
	// counted, checks the thread's status after the run.
	last := uint64(b.N)
	if loaders == "1" {
		last = 0
	}
	// Each op checks its own loads (so their total needs no
	// check of its own); the first and the last op also read
	// the thread's status file.
	op := func(i uint64, check bool) error {
		got, err := shape.op(l, i, check)
		loads.Add(int64(got))
		if err == nil && got != shape.loads {
			err = fmt.Errorf("loaded %d filters, want %d", got, shape.loads)
		}
		if err != nil {
			return fmt.Errorf("op %d: %w", i, err)
		}
		return nil
	}
	do := func() bool {
		i := uint64(ops.Add(1))
		if err := op(i, i == 1 || i == last); err != nil {
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
		// b.Loop finds the op count within this one call (once per
		// -count): no trial's ops are thrown away.
		for b.Loop() {
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
	n, loaded := ops.Load(), loads.Load()
	if last == 0 {
		if err := op(uint64(n)+1, true); err != nil {
			b.Fatalf("after the run: %v", err)
		}
	}
	unit.Report(b, n, "ops/s")
	unit.Report(b, loaded, "loads/s")
}

// TestLowFdLimit runs the loaders=gomaxprocs row with 64 loaders under
// ulimit -n 32: it must skip naming RLIMIT_NOFILE.
func TestLowFdLimit(t *testing.T) {
	limits.SkipsUnderNofile(t, 32, "^BenchmarkLoad$/^shape=stress-ng$/^loaders=gomaxprocs$", "GOMAXPROCS=64")
}

// BenchmarkBystander measures what filter loading costs the other CPUs
// (report 000: the IBPB flush on BPF JIT allocation interrupts every CPU).
// A victim pinned to one CPU runs the UnixBench syscall mix; with
// loaders=stress-ng, every other usable CPU runs stress-ng's op in a loop,
// pinned there; with loaders=idle they do nothing. One op is one victim
// loop; compare the two rows.
func BenchmarkBystander(b *testing.B) {
	usable := limits.NeedCPUs(b, "a victim and a loader on CPUs of their own", 2)
	skip.NeedProcs(b, 2, runtime.GOMAXPROCS(0))
	victim := usable[0]
	if *victimCPU >= 0 {
		if !slices.Contains(usable, *victimCPU) {
			b.Fatalf("KBENCH_VICTIM_CPU=%d is not a usable CPU; usable: %v", *victimCPU, usable)
		}
		victim = *victimCPU
	}
	var loaderCPUs []int
	for _, c := range usable {
		if c != victim && len(loaderCPUs) < runtime.GOMAXPROCS(0)-1 {
			loaderCPUs = append(loaderCPUs, c)
		}
	}
	for _, mode := range []string{"idle", "stress-ng"} {
		b.Run("loaders="+mode, func(b *testing.B) {
			n := 0
			if mode == "stress-ng" {
				n = len(loaderCPUs)
			}
			// The victim's loop, and per loader one fd (its op's
			// /dev/null, or its status file) and one thread at a time.
			what := fmt.Sprintf("a victim loop and %d loaders", n)
			skip.IfNotSupported(b, limits.Fds(what, unixbench.Fds+n, fmt.Sprintf("%d for the loop + %d loaders x 1", unixbench.Fds, n)))
			skip.IfNotSupported(b, limits.Tasks(what, 1+n, fmt.Sprintf("1 victim thread + %d loader threads", n)))
			var loaders *loaderSet
			if mode == "stress-ng" {
				loaders = startLoaders(b, newLoader(b), loaderCPUs)
			}
			b.Cleanup(func() { contained(b) })
			preempted, err := runVictim(b, victim, n)
			if loaders != nil {
				// Every loader completed an op before the victim started
				// and must complete another after it ended, so they were
				// all at work for its whole run.
				if lerr := loaders.stop(); lerr != nil {
					b.Fatalf("loaders: %v", lerr)
				}
				unit.Metric(b, loaders.rate(), "loader-ops/s")
			}
			skip.OnlyIfNotSupported(b, err)
			if err != nil {
				b.Fatal(err)
			}
			unit.Report(b, int64(b.N), "loops/s")
			unit.Report(b, preempted, "victim-preempt/s")
		})
	}
}

// BenchmarkSyscall is UnixBench's syscall test on a thread carrying N
// identical filters (report 001). One op is one loop: five calls for
// work=mix, one for work=getpid.
func BenchmarkSyscall(b *testing.B) {
	for _, work := range []unixbench.Work{unixbench.Mix, unixbench.Getpid} {
		for _, kind := range []Kind{Cached, Full} {
			for _, n := range *filterCounts {
				b.Run(fmt.Sprintf("work=%s/kind=%s/filters=%d", work, kind, n), func(b *testing.B) {
					benchSyscall(b, work, kind, n)
				})
			}
		}
	}
}
