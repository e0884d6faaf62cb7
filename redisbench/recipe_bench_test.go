package redisbench

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/rate"
	"github.com/kbench/kbench/internal/region"
	"github.com/kbench/kbench/internal/skip"
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
// depth and, for ZPOPMIN and GET, one request per round trip.
func BenchmarkRecipe(b *testing.B) {
	for _, c := range []struct {
		cmd  string
		pipe []int
	}{
		{SET, []int{Pipeline}},
		{GET, []int{Pipeline, 1}},
		{ZADD, []int{Pipeline}},
		{ZPOPMIN, []int{Pipeline, 1}},
	} {
		b.Run("cmd="+c.cmd, func(b *testing.B) {
			for _, p := range c.pipe {
				b.Run(fmt.Sprintf("pipeline=%d", p), func(b *testing.B) { benchRecipe(b, need(b), c.cmd, p) })
			}
		})
	}
}

// meter runs the benchmark timer and sums the server's CPU time over the
// timed sections only.
type meter struct {
	b          *testing.B
	r          *region.Region
	pid        int
	cpu, mark  time.Duration
	resolution time.Duration
	err        error
}

func (m *meter) start() {
	if m.pid != 0 && m.err == nil {
		m.mark, m.resolution, m.err = ProcessCPU(m.pid)
	}
	m.r.StartTimer()
}

func (m *meter) stop() {
	m.r.StopTimer()
	if m.pid != 0 && m.err == nil {
		var now time.Duration
		now, m.resolution, m.err = ProcessCPU(m.pid)
		m.cpu += now - m.mark
	}
}

// benchRecipe sends b.N requests of cmd in rounds of RoundRequests(p), the
// last round cut short at b.N. Before each ZPOPMIN round, outside the
// timer, myzset is emptied and refilled by one recipe ZADD round; each ZADD
// round starts from an empty myzset, as after the recipe's ZPOPMIN; GET
// runs after one SET round, as in the recipe.
func benchRecipe(b *testing.B, s *Session, cmd string, p int) {
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
		if err := s.Round(SET, Pipeline, RoundRequests(Pipeline), &t, nil); err != nil {
			b.Fatalf("SET round before GET: %v", err)
		}
		want["set"] = t.Sent
	}
	m := &meter{b: b, r: r, pid: target.PID}
	var t Tally
	lat := make([]int64, 0, b.N/p+1)
	round := RoundRequests(p)
	rounds := 0
	r.ResetTimer()
	for done := 0; done < b.N; rounds++ {
		n := min(round, b.N-done)
		var members int64
		switch cmd {
		case ZPOPMIN:
			if members, err = s.Fill(); err != nil {
				b.Fatalf("filling %s: %v", ZSetKey, err)
			}
			want["zadd"] += int64(RoundRequests(Pipeline))
			want["del"]++
		case ZADD:
			if err := c.Del(ctx, ZSetKey).Err(); err != nil {
				b.Fatal(err)
			}
			want["del"]++
		}
		r := t
		m.start()
		err := s.Round(cmd, p, n, &t, &lat)
		m.stop()
		if err != nil {
			b.Fatalf("round %d: %v", rounds, err)
		}
		switch cmd {
		case ZPOPMIN:
			if err := CheckPops(members, n, t.NonEmpty-r.NonEmpty, t.Empty-r.Empty); err != nil {
				b.Fatalf("round %d: %v", rounds, err)
			}
		case ZADD:
			card, err := c.ZCard(ctx, ZSetKey).Result()
			if err != nil || card != t.Added-r.Added {
				b.Fatalf("round %d: ZADD replies counted %d new members, ZCARD says %d (%v)", rounds, t.Added-r.Added, card, err)
			}
			want["zcard"]++
		}
		done += n
	}
	r.End()
	want[map[string]string{SET: "set", GET: "get", ZADD: "zadd", ZPOPMIN: "zpopmin"}[cmd]] += int64(b.N)
	after, err := CommandStats(ctx, c)
	if err != nil {
		b.Fatal(err)
	}
	if t.Sent != int64(b.N) || t.Replies != t.Sent {
		b.Fatalf("sent %d requests and checked %d replies for b.N = %d", t.Sent, t.Replies, b.N)
	}
	if err := CheckCalls(before, after, want); err != nil {
		b.Fatal(err)
	}
	rate.Report(b, t.Sent, "req/s")
	slices.Sort(lat)
	rate.Metric(b, float64(rate.Percentile(lat, 50))/1e3, "p50-us/batch")
	rate.Metric(b, float64(rate.Percentile(lat, 99))/1e3, "p99-us/batch")
	switch {
	case m.pid == 0: // an external server's CPU time is not ours to read
	case m.err != nil:
		b.Logf("no server-us/req: %v", m.err)
	case m.resolution > time.Nanosecond && b.Elapsed() < 100*m.resolution:
		b.Logf("no server-us/req: /proc/%d/stat counts CPU time in %v ticks, too coarse for a %v run (the kernel offers no schedstat)", m.pid, m.resolution, b.Elapsed())
	default:
		rate.Metric(b, m.cpu.Seconds()*1e6/float64(b.N), "server-us/req")
	}
}
