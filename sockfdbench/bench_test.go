//go:build linux

package sockfdbench

import (
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/benchmain"
	"github.com/kbench/kbench/internal/fingerprint"
	"github.com/kbench/kbench/internal/limits"
	"github.com/kbench/kbench/internal/peer"
	"github.com/kbench/kbench/internal/region"
	"github.com/kbench/kbench/internal/rounds"
	"github.com/kbench/kbench/internal/skip"
	"github.com/kbench/kbench/internal/thread"
	"github.com/kbench/kbench/internal/unit"
)

func TestMain(m *testing.M) {
	os.Exit(benchmain.Main(m, func() []fingerprint.Field {
		return []fingerprint.Field{{Key: "sockfd.fds_per_conn", Value: PerConnSummary(runtime.GOMAXPROCS(0))}, peer.Fingerprint()}
	}))
}

// BenchmarkSockfd is stress-ng's sockfd stressor: one op is one server
// iteration (open, sendmsg with SCM_RIGHTS, close, EBADF sendmsg); the
// clients receive every message. run=serial is one pair, run=parallel one
// pair per GOMAXPROCS (lkp's nr_threads=100%). mm=separate: each side is
// a child process, as stress-ng forks (the package doc says why there is
// no mm=shared row). cpu= places each pair (peer.Placement): any, as
// stress-ng and lkp ran; same and cross for kind=file fds=1. A row's
// sides start once and each -count is one call of timed rounds on them
// (internal/rounds).
func BenchmarkSockfd(b *testing.B) {
	for _, kind := range []Kind{KindFile, KindUnix} {
		for _, fds := range rowFds {
			for _, run := range []string{"serial", "parallel"} {
				for _, cpu := range peer.Placements {
					if cpu != peer.Any && !(kind == KindFile && fds == 1) {
						continue
					}
					name := fmt.Sprintf("shape=stress-ng/kind=%s/fds=%d/run=%s/mm=separate/cpu=%s", kind, fds, run, cpu)
					before, err := limits.OpenFds()
					if err != nil {
						b.Fatal(err)
					}
					var k peer.Kept[*Sides]
					b.Run(name, func(b *testing.B) {
						pairs := 1
						if run == "parallel" {
							pairs = runtime.GOMAXPROCS(0)
						}
						benchSockfd(b, &k, Config{Kind: kind, FdsPerMsg: fds, Pairs: pairs, CPU: cpu})
					})
					if err := endRow(&k, before); err != nil {
						b.Errorf("%s: at the row's end: %v", name, err)
					}
				}
			}
		}
	}
}

func benchSockfd(b *testing.B, k *peer.Kept[*Sides], cfg Config) {
	r := region.New(b)
	var res Result
	ops, err := rounds.Loop(b, r, func(n int64) (int64, error) {
		cfg.Ops = n
		got, err := keptRound(k, cfg, region.ClockTimer{Region: r}) // counted until End: see region.ClockTimer
		res.add(got.Counts)
		res.Seen.Add(got.Seen)
		return got.Ops, err
	})
	r.EndOps(ops)
	skip.IfNotSupported(b, err)
	if res.Retries > 0 {
		b.Logf("%d sends repeated after ETOOMANYREFS (unprivileged fds-in-flight limit)", res.Retries)
	}
	unit.Report(b, res.Ops, "ops/s")
	unit.Report(b, res.FdsRecv, "fds/s")
	if share, ok := res.Seen.Share(); ok {
		unit.Metric(b, share, "same-cpu/op")
	}
}

// BenchmarkSockfdGC makes socket cycles that only the unix garbage
// collector reclaims: one op is one cycle made and dropped, and the timed
// section ends once the collector has freed them all.
func BenchmarkSockfdGC(b *testing.B) {
	var c *cycler
	err := thread.Run(func() error {
		r := region.New(b) // its counters' fds are open before the count
		// A cycle's socketpair and, in a wait for the collector after
		// ETOOMANYREFS, /proc/net/unix or a fresh socket.
		if err := limits.Fds("socket cycles", 3, "a socketpair + 1 while waiting for the collector"); err != nil {
			return err
		}
		before, err := limits.OpenFds()
		if err != nil {
			return err
		}
		c = newCycler()
		r.ResetTimer()
		for range b.N {
			if err := c.cycle(); err != nil {
				return err
			}
		}
		err = c.waitCollected(before, 30*time.Second)
		r.End()
		return err
	})
	skip.OnlyIfNotSupported(b, err)
	if err != nil {
		b.Fatalf("SockfdGC: %v", err)
	}
	if c.retries > 0 {
		b.Logf("%d sends repeated after ETOOMANYREFS, each after waiting for the collector (unprivileged fds-in-flight limit)", c.retries)
	}
	if c.cycles != int64(b.N) {
		b.Fatalf("SockfdGC: made %d cycles, want %d", c.cycles, b.N)
	}
	unit.Report(b, c.cycles, "ops/s")
	unit.Report(b, 2*c.cycles, "fds/s")
}
