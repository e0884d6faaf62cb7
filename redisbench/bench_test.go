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

// meter times the rounds on the row's own clock and sums the server's CPU
// time over them; it starts and stops the region with each round.
type meter struct {
	b          *testing.B
	r          *region.Region
	pid        int
	t0         time.Time
	e0         time.Duration // b.Elapsed() at t0
	elapsed    time.Duration // every request of every round
	cpu, mark  time.Duration
	resolution time.Duration
	err        error
}

// start starts a round: the region (the testing package's timer and the
// instruments) and the row's own clock.
func (m *meter) start() {
	if m.pid != 0 && m.err == nil {
		m.mark, m.resolution, m.err = procfs.Host.ProcessCPU(m.pid)
	}
	m.r.StartTimer()
	m.t0 = time.Now()
	m.e0 = m.b.Elapsed()
}

// loopStopped takes out of the round's own clock the time since b.Loop,
// ending within the round, stopped the testing package's timer (its
// StopTimer reads runtime.MemStats, a stop-the-world); the region's
// instruments go on counting to the end of the round. The timer ran
// without a break since start, so it stopped at t0 plus what it added.
func (m *meter) loopStopped() {
	stopped := m.t0.Add(m.b.Elapsed() - m.e0)
	m.t0 = m.t0.Add(time.Since(stopped))
}

// stop ends a round: the row's own clock, the region, the server's CPU.
func (m *meter) stop() {
	m.elapsed += time.Since(m.t0)
	m.r.StopTimer()
	if m.pid != 0 && m.err == nil {
		var now time.Duration
		now, m.resolution, m.err = procfs.Host.ProcessCPU(m.pid)
		m.cpu += now - m.mark
	}
}

// benchRecipe sends, with client, one request per b.Loop iteration, in
// whole rounds of RoundRequests(p), and reports what it sent, timed on
// its own clock: req/s, ns/op and server-us/req cover every request of
// every round. b.Loop ramps up within this one call, its timer over the
// requests it iterated; when it stops within a round, the rest of the
// round is sent and checked after it, on the row's own clock and the
// region's instruments only. A round starts in the iteration of its first
// request, with the testing package's timer stopped around its untimed
// setup: before each ZPOPMIN round, myzset is emptied and refilled by one
// recipe ZADD round; each ZADD round starts from an empty myzset, as
// after the recipe's ZPOPMIN. GET runs after one SET round, as in the
// recipe. Between rounds the timer runs (b.Loop requires it) but not the
// region.
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
	m := &meter{b: b, r: r, pid: target.PID}
	size := RoundRequests(p)
	var (
		t       Tally
		lat     []int64
		q       *sender // the round under way; nil between rounds
		rounds  int     // rounds sent and checked
		members int64   // in myzset when the ZPOPMIN round began
		last    Tally   // t when the round began
	)
	begin := func() { // outside the timer and the region
		switch cmd {
		case ZPOPMIN:
			if members, err = s.Fill(); err != nil {
				b.Fatalf("filling %s: %v", ZSetKey, err)
			}
			want["zadd"] += int64(RoundRequests(Pipeline))
			want["del"]++
			want["zcard"]++ // Fill's count of the members it made
		case ZADD:
			if err := c.Del(ctx, ZSetKey).Err(); err != nil {
				b.Fatal(err)
			}
			want["del"]++
		}
		lat = slices.Grow(lat, size/p+1)
		last = t
		if q, err = s.sender(client, cmd, p, size, &t, &lat); err != nil {
			b.Fatal(err)
		}
		m.start()
	}
	end := func() {
		m.stop()
		switch cmd {
		case ZPOPMIN:
			if err := CheckPops(members, size, t.NonEmpty-last.NonEmpty, t.Empty-last.Empty); err != nil {
				b.Fatalf("round %d: %v", rounds, err)
			}
		case ZADD:
			card, err := c.ZCard(ctx, ZSetKey).Result()
			if err != nil || card != t.Added-last.Added {
				b.Fatalf("round %d: ZADD replies counted %d new members, ZCARD says %d (%v)", rounds, t.Added-last.Added, card, err)
			}
			want["zcard"]++
		}
		q = nil
		rounds++
	}
	// b.Loop must find the timer running; the region starts with a round.
	b.StartTimer()
	for b.Loop() {
		if q == nil {
			b.StopTimer()
			begin()
		}
		if err := q.queue(); err != nil {
			b.Fatalf("round %d: %v", rounds, err)
		}
		if q.done() {
			end()
			b.StartTimer()
		}
	}
	if q != nil {
		m.loopStopped()
		for !q.done() {
			if err := q.queue(); err != nil {
				b.Fatalf("round %d: %v", rounds, err)
			}
		}
		end()
	}
	total := rounds * size
	// The counters cover every request of every round, as req/s does.
	r.EndOps(int64(total))
	want[map[string]string{SET: "set", GET: "get", ZADD: "zadd", ZPOPMIN: "zpopmin"}[cmd]] += t.Sent
	if err := s.InStep(); err != nil {
		b.Fatal(err)
	}
	want["ping"] += 2
	after, err := CommandStats(ctx, c)
	if err != nil {
		b.Fatal(err)
	}
	if rounds != len(RoundSizes(b.N, p)) || t.Sent != int64(total) || t.Replies != t.Sent {
		b.Fatalf("sent %d requests and checked %d replies in %d rounds of %d; b.N = %d is %d whole rounds",
			t.Sent, t.Replies, rounds, size, b.N, len(RoundSizes(b.N, p)))
	}
	if err := CheckCalls(before, after, want); err != nil {
		b.Fatal(err)
	}
	if m.elapsed <= 0 {
		b.Fatalf("no time measured over %d requests", t.Sent)
	}
	unit.Metric(b, float64(t.Sent)/m.elapsed.Seconds(), "req/s")
	// ns/op per request sent, over the same time: the testing package's
	// own figure divides its timer's time by b.N.
	b.ReportMetric(float64(m.elapsed.Nanoseconds())/float64(t.Sent), "ns/op")
	slices.Sort(lat)
	unit.Metric(b, float64(unit.Percentile(lat, 50))/1e3, "p50-us/batch")
	unit.Metric(b, float64(unit.Percentile(lat, 99))/1e3, "p99-us/batch")
	switch {
	case m.pid == 0: // an external server's CPU time is not ours to read
	case m.err != nil:
		b.Logf("no server-us/req: %v", m.err)
	case m.resolution > time.Nanosecond && m.elapsed < 100*m.resolution:
		b.Logf("no server-us/req: /proc/%d/stat counts CPU time in %v ticks, too coarse for a %v run (the kernel offers no schedstat)", m.pid, m.resolution, m.elapsed)
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
