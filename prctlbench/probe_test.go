//go:build linux

package prctlbench

import (
	"runtime"
	"testing"

	"github.com/kbench/kbench/internal/cpus"
	"github.com/kbench/kbench/internal/region"
	"github.com/kbench/kbench/internal/skip"
	"github.com/kbench/kbench/internal/unit"
	"github.com/kbench/kbench/internal/unixbench"
)

// BenchmarkSyscallMix: one op is one loop of UnixBench's `syscall` mix
// (close(dup(fd)), getpid, getuid, umask), five kernel entries and returns.
func BenchmarkSyscallMix(b *testing.B) {
	checkContainedAfter(b)
	l, err := unixbench.New()
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	r := region.Begin(b)
	err = l.Run(unixbench.Mix, b.N)
	r.End()
	if err != nil {
		b.Fatalf("after %d loops asked: %v", b.N, err)
	}
	unit.Report(b, int64(b.N), "loops/s")
}

// BenchmarkPingPong: one op is one round trip of a counter between two
// threads pinned to different CPUs, over two pipes.
func BenchmarkPingPong(b *testing.B) {
	for _, mm := range []string{"separate", "shared"} {
		b.Run("mm="+mm, func(b *testing.B) { benchPingPong(b, mm == "shared") })
	}
}

func benchPingPong(b *testing.B, shared bool) {
	checkContainedAfter(b)
	usable, err := cpus.Usable()
	if err != nil {
		b.Fatal(err)
	}
	skip.NeedCPUs(b, 2, usable)
	skip.NeedProcs(b, 2, runtime.GOMAXPROCS(0))
	r := region.New(b)
	switches, err := runPingPong(usable[0], usable[1], b.N, shared, r.ResetTimer, r.StopClock) // counted until End: see region.ClockTimer
	r.End()
	if err != nil {
		b.Fatalf("CPUs %d and %d, %d round trips: %v", usable[0], usable[1], b.N, err)
	}
	// Each round trip blocks both sides once; a run with fewer switches
	// than round trips did not measure context switches.
	if switches < 0 {
		b.Log("no voluntary_ctxt_switches line in /proc/thread-self/status: context switches not checked")
	}
	if switches >= 0 && switches < b.N {
		b.Fatalf("%d voluntary context switches for %d round trips between CPUs %d and %d: the threads did not sleep", switches, b.N, usable[0], usable[1])
	}
	unit.Report(b, int64(b.N), "roundtrips/s")
}
