//go:build linux

package redisbench

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/limits"
	"github.com/kbench/kbench/internal/procfs"
	"github.com/kbench/kbench/internal/redisserver"
	"github.com/kbench/kbench/internal/region"
	"github.com/kbench/kbench/internal/rounds"
	"github.com/kbench/kbench/internal/skip"
	"github.com/kbench/kbench/internal/unit"
)

// need returns the session, skipping when there is no server and failing
// when there is one the benchmark must not or cannot use.
func need(tb testing.TB) *Session {
	tb.Helper()
	skip.IfNotSupported(tb, target.Err)
	if target.session == nil {
		tb.Fatal("redisbench: no server was opened (TestMain did not run Open)")
	}
	return target.session
}

// BenchmarkRecipe runs the four tests of MMTests' redis-benchmark-small
// recipe that report 000 compares, in the recipe's order, at its pipeline
// depth with the wire client and, for ZPOPMIN and GET, also with go-redis
// and with one request per round trip (go-redis).
func BenchmarkRecipe(b *testing.B) {
	type depth struct {
		p       int
		clients []Client
	}
	for _, c := range []struct {
		cmd    string
		depths []depth
	}{
		{SET, []depth{{Pipeline, []Client{Wire}}}},
		{GET, []depth{{Pipeline, []Client{Wire, GoRedis}}, {1, []Client{GoRedis}}}},
		{ZADD, []depth{{Pipeline, []Client{Wire}}}},
		{ZPOPMIN, []depth{{Pipeline, []Client{Wire, GoRedis}}, {1, []Client{GoRedis}}}},
	} {
		b.Run("cmd="+c.cmd, func(b *testing.B) {
			for _, d := range c.depths {
				b.Run(fmt.Sprintf("pipeline=%d", d.p), func(b *testing.B) {
					for _, cl := range d.clients {
						b.Run("client="+string(cl), func(b *testing.B) { benchRecipe(b, need(b), cl, c.cmd, d.p) })
					}
				})
			}
		})
	}
}

// serverCPU sums the server's CPU time over the timed sections of a row,
// read from /proc around each (procfs.ProcessCPU); pid 0 is an external
// server, whose CPU time is not ours to read.
type serverCPU struct {
	pid        int
	cpu, mark  time.Duration
	resolution time.Duration
	err        error
}

func (m *serverCPU) start() {
	if m.pid != 0 && m.err == nil {
		m.mark, m.resolution, m.err = procfs.Host.ProcessCPU(m.pid)
	}
}

func (m *serverCPU) stop() {
	if m.pid != 0 && m.err == nil {
		var now time.Duration
		now, m.resolution, m.err = procfs.Host.ProcessCPU(m.pid)
		m.cpu += now - m.mark
	}
}

// benchRecipe sends whole rounds of RoundRequests(p) requests of cmd with
// client, as many as internal/rounds asks for: one op is one request, N is
// the requests sent, and the timer (the region) runs over the rounds'
// requests only. Each round's setup is outside it: before each ZPOPMIN
// round, myzset is emptied and refilled by one recipe ZADD round; each
// ZADD round starts from an empty myzset, as after the recipe's ZPOPMIN.
// GET runs after one SET round, as in the recipe.
func benchRecipe(b *testing.B, s *Session, client Client, cmd string, p int) {
	ctx, c := s.ctx, s.c
	want := map[string]int64{}
	r := region.New(b)
	r.StopTimer()
	before, err := CommandStats(ctx, c)
	if err != nil {
		b.Fatal(err)
	}
	if cmd == GET {
		var t Tally
		if err := s.Round(Wire, SET, Pipeline, RoundRequests(Pipeline), &t, nil); err != nil {
			b.Fatalf("SET round before GET: %v", err)
		}
		want["set"] = t.Sent
	}
	m := &serverCPU{pid: target.PID}
	size := RoundRequests(p)
	var (
		t     Tally
		lat   []int64
		count int // rounds sent and checked
	)
	// round sends one whole round and checks it, its setup and checks
	// outside the timer.
	round := func() error {
		var members int64 // in myzset when a ZPOPMIN round begins
		switch cmd {
		case ZPOPMIN:
			if members, err = s.Fill(); err != nil {
				return fmt.Errorf("filling %s: %v", ZSetKey, err)
			}
			want["zadd"] += int64(RoundRequests(Pipeline))
			want["del"]++
			want["zcard"]++ // Fill's count of the members it made
		case ZADD:
			if err := c.Del(ctx, ZSetKey).Err(); err != nil {
				return err
			}
			want["del"]++
		}
		lat = slices.Grow(lat, size/p+1)
		last := t
		m.start()
		r.StartTimer()
		err := s.Round(client, cmd, p, size, &t, &lat)
		r.StopTimer()
		m.stop()
		if err != nil {
			return fmt.Errorf("round %d: %v", count, err)
		}
		switch cmd {
		case ZPOPMIN:
			if err := CheckPops(members, size, t.NonEmpty-last.NonEmpty, t.Empty-last.Empty); err != nil {
				return fmt.Errorf("round %d: %v", count, err)
			}
		case ZADD:
			card, err := c.ZCard(ctx, ZSetKey).Result()
			if err != nil || card != t.Added-last.Added {
				return fmt.Errorf("round %d: ZADD replies counted %d new members, ZCARD says %d (%v)", count, t.Added-last.Added, card, err)
			}
			want["zcard"]++
		}
		count++
		return nil
	}
	sent, err := rounds.Loop(b, r, func(n int64) (int64, error) {
		var done int64
		for _, k := range RoundSizes(int(n), p) {
			if err := round(); err != nil {
				return done, err
			}
			done += int64(k)
		}
		return done, nil
	})
	// The counters cover every request of every round, as req/s does.
	r.EndOps(sent)
	if err != nil {
		b.Fatal(err)
	}
	want[map[string]string{SET: "set", GET: "get", ZADD: "zadd", ZPOPMIN: "zpopmin"}[cmd]] += t.Sent
	if err := s.InStep(); err != nil {
		b.Fatal(err)
	}
	want["ping"] += 2
	after, err := CommandStats(ctx, c)
	if err != nil {
		b.Fatal(err)
	}
	if t.Sent != sent || t.Replies != t.Sent || sent != int64(count*size) {
		b.Fatalf("sent %d requests and checked %d replies in %d rounds of %d; the rounds reported %d", t.Sent, t.Replies, count, size, sent)
	}
	if err := CheckCalls(before, after, want); err != nil {
		b.Fatal(err)
	}
	unit.Report(b, t.Sent, "req/s")
	slices.Sort(lat)
	unit.Metric(b, float64(unit.Percentile(lat, 50))/1e3, "p50-us/batch")
	unit.Metric(b, float64(unit.Percentile(lat, 99))/1e3, "p99-us/batch")
	elapsed := b.Elapsed()
	switch {
	case m.pid == 0: // an external server's CPU time is not ours to read
	case m.err != nil:
		b.Logf("no server-us/req: %v", m.err)
	case m.resolution > time.Nanosecond && elapsed < 100*m.resolution:
		b.Logf("no server-us/req: /proc/%d/stat counts CPU time in %v ticks, too coarse for a %v run (the kernel offers no schedstat)", m.pid, m.resolution, elapsed)
	default:
		unit.Metric(b, m.cpu.Seconds()*1e6/float64(t.Sent), "server-us/req")
	}
}

// TestLowFdLimit runs the SET rows under ulimit -n 32, too few for
// redis-server to serve the benchmark's two connections: they must skip
// naming RLIMIT_NOFILE.
func TestLowFdLimit(t *testing.T) {
	if *externalAddr != "" {
		t.Skip("KBENCH_REDIS_ADDR is set: the copy would use that server, whose limits are its own")
	}
	if _, err := redisserver.Find(); err != nil {
		t.Skip(err)
	}
	if limits.MayRaise() {
		// As the guest's root under vmexec: redis-server raises its own
		// hard limit, so the row rightly runs under any ulimit -n.
		t.Skip("this process has CAP_SYS_RESOURCE: redis-server may raise its own hard RLIMIT_NOFILE, so a low limit does not stop the row")
	}
	limits.SkipsUnderNofile(t, 32, "^BenchmarkRecipe$/^cmd=SET$")
}
