//go:build linux

package prctlbench

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/limits"
	"github.com/kbench/kbench/internal/peer"
	"github.com/kbench/kbench/internal/pulse"
	"github.com/kbench/kbench/internal/region"
	"github.com/kbench/kbench/internal/rounds"
	"github.com/kbench/kbench/internal/skip"
	"github.com/kbench/kbench/internal/unit"
	"github.com/kbench/kbench/internal/unixbench"
)

// BenchmarkSyscallMix: one op is one loop of UnixBench's `syscall` mix
// (close(dup(fd)), getpid, getuid, umask), five kernel entries and returns.
func BenchmarkSyscallMix(b *testing.B) {
	checkContainedAfter(b)
	l, err := unixbench.New()
	skip.IfNotSupported(b, err)
	defer l.Close()
	r := region.New(b)
	skip.IfNotSupported(b, l.CheckFds()) // the instruments' fds are open now
	// One call per -count: b.Loop ramps up inside it, every loop timed.
	r.ResetTimer()
	err = l.For(unixbench.Mix, b)
	r.End()
	if err != nil {
		b.Fatalf("after %d loops asked: %v", b.N, err)
	}
	unit.Report(b, int64(b.N), "loops/s")
}

// BenchmarkPingPong: one op is one round trip of a counter between two
// sides over two pipes: two child processes (mm=separate) or two threads
// of the test binary (mm=shared), placed as cpu= says (peer.Placement:
// any, both on one CPU, or each on its own). The sides live for the row;
// each -count is one call of timed rounds on them (internal/rounds).
func BenchmarkPingPong(b *testing.B) {
	for _, mm := range []string{"separate", "shared"} {
		for _, cpu := range peer.Placements {
			var row peer.Kept[*pingPongSides]
			name := fmt.Sprintf("mm=%s/cpu=%s", mm, cpu)
			b.Run(name, func(b *testing.B) { benchPingPong(b, &row, mm == "shared", cpu) })
			if err := row.Close(); err != nil {
				b.Errorf("%s: ending the sides: %v", name, err)
			}
		}
	}
}

func benchPingPong(b *testing.B, row *peer.Kept[*pingPongSides], shared bool, cpu peer.Placement) {
	checkContainedAfter(b)
	plan, err := peer.Place(cpu)
	skip.IfNotSupported(b, err)
	skip.NeedProcs(b, 2, runtime.GOMAXPROCS(0))
	cpuA, cpuB := pinned(plan.End(0, 0)), pinned(plan.End(0, 1))
	r := region.New(b)
	// On the trial that starts the sides, getPingPong checks their fds:
	// the instruments' are open now.
	sides, err := getPingPong(row, cpuA, cpuB, shared)
	skip.IfNotSupported(b, err)
	var timer region.Timer = r
	if !shared {
		timer = region.ClockTimer{Region: r} // the children's CPU time is counted until End
	}
	var (
		seen       peer.Reading
		unswitched bool
	)
	ops, err := rounds.Loop(b, r, func(n int64) (int64, error) {
		var switches int
		err := row.Round(func(s *pingPongSides) (err error) {
			switches, err = s.round(int(n), timer)
			return err
		})
		if err != nil {
			return 0, err
		}
		seen.Add(sides.seen)
		// Each round trip on blocking pipes sleeps at least one side
		// (both, in the steady state); a round whose two sides together
		// switched fewer times than round trips did not measure context
		// switches. The round's first round trip is let off: both sides
		// start at the go, so ping's counter can be in the pipe before
		// pong reads, and its echo before ping does
		// (results/2026-12-01-prctlbench-peer.md).
		if switches < 0 {
			unswitched = true
		}
		if switches >= 0 && int64(switches) < n-1 {
			return n, fmt.Errorf("%d voluntary context switches for %d round trips: the sides did not sleep", switches, n)
		}
		return n, nil
	})
	r.EndOps(ops)
	if err != nil {
		b.Fatalf("%s, after %d round trips: %v", where(cpu, cpuA, cpuB), ops, err)
	}
	if unswitched {
		b.Log("no voluntary_ctxt_switches line in /proc/thread-self/status: context switches not checked")
	}
	unit.Report(b, ops, "roundtrips/s")
	if share, ok := seen.Share(); ok {
		unit.Metric(b, share, "same-cpu/op")
	}
}

// where names a row's placement in messages.
func where(cpu peer.Placement, cpuA, cpuB int) string {
	if cpu == peer.Any {
		return "cpu=any"
	}
	return fmt.Sprintf("cpu=%s (CPUs %d and %d)", cpu, cpuA, cpuB)
}

// pinned is a side's CPU for startPingPong: -1 where it is not pinned.
func pinned(pin bool, cpu int) int {
	if !pin {
		return -1
	}
	return cpu
}

// TestCrossSkipsOnOneCPU runs the cpu=cross PingPong row in a copy of
// this test binary that taskset confines to one CPU: it must skip,
// naming the affinity mask in its skip line, where the cpu=same row runs.
func TestCrossSkipsOnOneCPU(t *testing.T) {
	usable := limits.NeedCPUs(t, "a CPU to confine a copy of the binary to", 1)
	taskset, err := exec.LookPath("taskset")
	if err != nil {
		t.Skip("no taskset (util-linux) to confine a copy of the binary to one CPU")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(taskset, "-c", fmt.Sprint(usable[0]), exe, "-test.run=^$",
		"-test.bench=^BenchmarkPingPong$/^mm=separate$/^cpu=(same|cross)$", "-test.benchtime=10x", "-test.v")
	cmd.Env = append(os.Environ(), "GOMAXPROCS=2") // the rows' own need, which one CPU would not meet
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	o := string(out)
	if !strings.Contains(o, "--- SKIP: BenchmarkPingPong/mm=separate/cpu=cross") || !strings.Contains(o, "CPU affinity") ||
		!regexp.MustCompile(`(?m)^# kbench skip \S+/prctlbench BenchmarkPingPong/mm=separate/cpu=cross-2: CPU affinity`).MatchString(o) ||
		regexp.MustCompile(`(?m)^BenchmarkPingPong/mm=separate/cpu=cross-\S*\s+[0-9]`).MatchString(o) {
		t.Errorf("confined to CPU %d, cpu=cross did not skip naming the affinity mask:\n%s", usable[0], o)
	}
	if !regexp.MustCompile(`BenchmarkPingPong/mm=separate/cpu=same\S*\s+10\s`).MatchString(o) {
		t.Errorf("confined to CPU %d, cpu=same did not run:\n%s", usable[0], o)
	}
}

// TestLowFdLimit runs the mm=separate PingPong row under ulimit -n 20: it
// must skip naming RLIMIT_NOFILE.
func TestLowFdLimit(t *testing.T) {
	limits.NeedCPUs(t, "the row's two sides, which it checks before its fds", 2)
	limits.SkipsUnderNofile(t, 20, "^BenchmarkPingPong$/^mm=separate$")
}

// TestPingPongNeedIsExact starts mm=separate PingPong's sides and runs
// three rounds on them, as a row's trials do, with the soft RLIMIT_NOFILE
// at exactly the fds open plus what checkPingPong counts, and at one
// fewer: it must pass at the first and fail at the second. The kept
// sides take no more fds in later rounds than while they start.
func TestPingPongNeedIsExact(t *testing.T) {
	usable := limits.NeedCPUs(t, "two sides pinned to CPUs of their own", 2)
	need, _ := pingPongFds(false)
	limits.NeedIsExact(t, "PingPong mm=separate", need, func() (func() error, func()) {
		run := func() error {
			s, err := startPingPong(usable[0], usable[1], false)
			if err != nil {
				return err
			}
			for range 3 {
				if _, err := s.round(10, nil); err != nil {
					s.close() // the round's error again
					return err
				}
			}
			return s.close()
		}
		return run, func() {}
	})
}

// BenchmarkPulse: one op is one pulse, on the online CPUs in turn.
func BenchmarkPulse(b *testing.B) {
	online := onlineCPUs(b)
	for _, mode := range pulse.Modes {
		b.Run("mode="+string(mode), func(b *testing.B) {
			checkContainedAfter(b)
			mayPulse(b, mode)
			var last pulse.Result
			r := region.Begin(b)
			for i := range b.N {
				res, err := pulse.Pulse(online[i%len(online)], mode)
				skip.IfNotSupported(b, err)
				last = res
			}
			r.End()
			unit.Report(b, int64(b.N), "pulses/s")
			b.Logf("%d pulses, last %v", b.N, last)
		})
	}
}

// BenchmarkSweep: one op is one pulse on every online CPU, as the report's
// shell loop ran ibpb-pulse.c once per CPU.
func BenchmarkSweep(b *testing.B) {
	online := onlineCPUs(b)
	for _, mode := range pulse.Modes {
		b.Run("mode="+string(mode), func(b *testing.B) {
			checkContainedAfter(b)
			mayPulse(b, mode)
			var last []pulse.Result
			r := region.Begin(b)
			for range b.N {
				results, err := pulse.Sweep(online, mode)
				skip.IfNotSupported(b, err)
				last = results
			}
			r.End()
			unit.Report(b, int64(b.N)*int64(len(online)), "pulses/s")
			b.Logf("%d sweeps of CPUs %v, last %s", b.N, online, pulse.SummarizeStates(last))
		})
	}
}
