//go:build linux

package redisbench

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// sideClient is a second connection to the benchmark's database, for
// looking at and sabotaging what the session did.
func sideClient(t *testing.T) *redis.Client {
	c := NewClient(target.Addr, target.DB)
	t.Cleanup(func() { c.Close() })
	return c
}

// needLocal skips unless the binary started its own server, whose
// databases the tests may write to.
func needLocal(t *testing.T) *Session {
	s := need(t)
	if target.server == nil {
		t.Skip("writes to other databases; runs only against the server redisbench starts, not KBENCH_REDIS_ADDR")
	}
	return s
}

func TestRoundRequests(t *testing.T) {
	if got := RoundRequests(Pipeline); got != 100096 || got/Pipeline != 391 {
		t.Errorf("RoundRequests(256) = %d, want 391 batches = 100096", got)
	}
	if got := RoundRequests(1); got != Requests {
		t.Errorf("RoundRequests(1) = %d, want %d", got, Requests)
	}
}

func TestLoopbackOnly(t *testing.T) {
	for _, ok := range []string{"127.0.0.1:6379", "127.1.2.3:1", "[::1]:6379", "localhost:6379"} {
		if err := checkLoopback(ok); err != nil {
			t.Errorf("%s rejected: %v", ok, err)
		}
	}
	for _, bad := range []string{"10.0.0.1:6379", "example.com:6379", "127.0.0.1", "127.0.0.1:0", "127.0.0.1:x"} {
		if checkLoopback(bad) == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

// TestValueMatchesRedisBenchmark has redis-benchmark itself SET its key
// (without -r the key stays key:__rand_int__) and compares the payload.
func TestValueMatchesRedisBenchmark(t *testing.T) {
	needLocal(t)
	rb, err := exec.LookPath("redis-benchmark")
	if err != nil {
		t.Skip("redis-benchmark not installed (Debian: apt-get install redis-tools)")
	}
	host, port, _ := strings.Cut(target.Addr, ":")
	if out, err := exec.Command(rb, "-h", host, "-p", port, "--dbnum", "3", "-n", "1", "-c", "1", "-t", "set", "--csv").CombinedOutput(); err != nil {
		t.Fatalf("redis-benchmark: %v\n%s", err, out)
	}
	c := NewClient(target.Addr, 3)
	defer c.Close()
	ctx := context.Background()
	got, err := c.Get(ctx, "key:__rand_int__").Result()
	c.Del(ctx, "key:__rand_int__")
	if err != nil || got != string(Value) {
		t.Fatalf("redis-benchmark's SET value is %q (%v); redisbench sends %q", got, err, Value)
	}
}

var (
	keyRE    = regexp.MustCompile(`^key:(\d{12})$`)
	memberRE = regexp.MustCompile(`^element:(\d{12})$`)
)

func below(t *testing.T, digits string) int {
	n, err := strconv.Atoi(digits)
	if err != nil || n >= KeySpace {
		t.Fatalf("%q is not a number below %d", digits, KeySpace)
	}
	return n
}

// TestSubstitutions checks on the server what SET and ZADD rounds wrote:
// key:<r> and element:<r> with 12 zero-padded digits below 50000, the
// score independent of the member, and exactly the keys the session
// believes it wrote.
func TestSubstitutions(t *testing.T) {
	s := need(t)
	ctx := context.Background()
	var tl Tally
	if err := s.Round(Wire, SET, Pipeline, 3000, &tl, nil); err != nil {
		t.Fatal(err)
	}
	side := sideClient(t)
	onServer := map[int]bool{}
	iter := side.Scan(ctx, 0, "key:*", 1000).Iterator()
	for iter.Next(ctx) {
		m := keyRE.FindStringSubmatch(iter.Val())
		if m == nil {
			t.Fatalf("key %q is not key:<12 digits>", iter.Val())
		}
		onServer[below(t, m[1])] = true
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	written := s.Written()
	if len(written) != len(onServer) || len(written) < 2800 {
		t.Fatalf("server holds %d key:<r> keys, session wrote %d (from 3000 SETs)", len(onServer), len(written))
	}
	for _, r := range written {
		if !onServer[r] {
			t.Fatalf("session wrote key:%012d; the server does not have it", r)
		}
	}

	if err := side.Del(ctx, ZSetKey).Err(); err != nil {
		t.Fatal(err)
	}
	defer side.Del(ctx, ZSetKey)
	if err := s.Round(Wire, ZADD, Pipeline, 3000, &tl, nil); err != nil {
		t.Fatal(err)
	}
	zs, err := side.ZRangeWithScores(ctx, ZSetKey, 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	same := 0
	for _, z := range zs {
		m := memberRE.FindStringSubmatch(z.Member.(string))
		if m == nil {
			t.Fatalf("member %q is not element:<12 digits>", z.Member)
		}
		if float64(below(t, m[1])) == z.Score {
			same++
		}
		if z.Score != float64(int(z.Score)) || z.Score < 0 || z.Score >= KeySpace {
			t.Fatalf("score %v is not an integer below %d", z.Score, KeySpace)
		}
	}
	if int64(len(zs)) != tl.Added || len(zs) < 2800 || same > 5 {
		t.Fatalf("%d members, %d ZADD replies of 1, %d members scored by their own number", len(zs), tl.Added, same)
	}
}

// TestExternalRefusesNonEmptyDB points OpenExternal at a database holding
// a key it did not write: it must refuse and leave the key; on an empty
// database it runs and deletes exactly what it wrote.
func TestExternalRefusesNonEmptyDB(t *testing.T) {
	needLocal(t)
	ctx := context.Background()
	other := NewClient(target.Addr, 11)
	defer other.Close()
	if err := other.Set(ctx, "not-kbench", "precious", 0).Err(); err != nil {
		t.Fatal(err)
	}
	defer other.Del(ctx, "not-kbench")

	ext := OpenExternal(target.Addr, 11)
	if ext.Err == nil {
		ext.Close()
		t.Fatal("OpenExternal accepted a database that holds a key")
	}
	for _, want := range []string{"KBENCH_REDIS_ADDR=" + target.Addr, "refusing", "database 11 holds 1 keys", "KBENCH_REDIS_DB"} {
		if !strings.Contains(ext.Err.Error(), want) {
			t.Errorf("refusal %q lacks %q", ext.Err, want)
		}
	}
	if v, err := other.Get(ctx, "not-kbench").Result(); err != nil || v != "precious" {
		t.Fatalf("the foreign key is now %q (%v)", v, err)
	}

	ext = OpenExternal(target.Addr, 12)
	if ext.Err != nil {
		t.Fatalf("empty database 12 refused: %v", ext.Err)
	}
	var tl Tally
	if err := ext.session.Round(Wire, SET, Pipeline, 500, &tl, nil); err != nil {
		t.Fatal(err)
	}
	db12 := NewClient(target.Addr, 12)
	defer db12.Close()
	if n, err := db12.DBSize(ctx).Result(); err != nil || n == 0 {
		t.Fatalf("after a SET round, database 12 holds %d keys (%v); the wire client wrote elsewhere", n, err)
	}
	if _, err := ext.session.Fill(); err != nil {
		t.Fatal(err)
	}
	if err := ext.Close(); err != nil {
		t.Fatal(err)
	}
	if n, err := db12.DBSize(ctx).Result(); err != nil || n != 0 {
		t.Fatalf("after Close, database 12 holds %d keys (%v); the benchmark did not delete what it wrote", n, err)
	}
}

// TestSelfChecksFire sabotages each check from a second connection and
// requires it to fail with the numbers, for each client.
func TestSelfChecksFire(t *testing.T) {
	s := needLocal(t)
	for _, client := range clients {
		t.Run("client="+string(client), func(t *testing.T) { selfChecksFire(t, s, client) })
	}
}

func selfChecksFire(t *testing.T, s *Session, client Client) {
	ctx := context.Background()
	side := sideClient(t)

	t.Run("commandstats", func(t *testing.T) {
		side.Ping(ctx) // its connection's handshake (HELLO) before the first snapshot
		before, err := CommandStats(ctx, s.c)
		if err != nil {
			t.Fatal(err)
		}
		var tl Tally
		if err := s.Round(client, GET, Pipeline, 300, &tl, nil); err != nil {
			t.Fatal(err)
		}
		side.Get(ctx, "key:000000000001") // one call the session did not send
		after, err := CommandStats(ctx, s.c)
		if err != nil {
			t.Fatal(err)
		}
		err = CheckCalls(before, after, map[string]int64{"get": tl.Sent})
		if err == nil || !strings.Contains(err.Error(), "get: server counted 301 calls, benchmark sent 300") {
			t.Fatalf("extra GET not caught: %v", err)
		}
		if err := CheckCalls(before, after, map[string]int64{"get": tl.Sent + 1}); err != nil {
			t.Fatalf("exact count rejected: %v", err)
		}
		side.Exists(ctx, "key:000000000001") // a command the benchmark names nowhere
		again, err := CommandStats(ctx, s.c)
		if err != nil {
			t.Fatal(err)
		}
		err = CheckCalls(before, again, map[string]int64{"get": tl.Sent + 1})
		if err == nil || !strings.Contains(err.Error(), "exists: server counted 1 calls, benchmark sent none") {
			t.Fatalf("a command left out of want not caught: %v", err)
		}
	})

	t.Run("pops", func(t *testing.T) {
		members, err := s.Fill()
		if err != nil {
			t.Fatal(err)
		}
		lowest, err := side.ZPopMin(ctx, ZSetKey, 5).Result() // taken behind the session's back
		if err != nil || len(lowest) != 5 {
			t.Fatal(lowest, err)
		}
		var tl Tally
		n := RoundRequests(Pipeline)
		if err := s.Round(client, ZPOPMIN, Pipeline, n, &tl, nil); err != nil {
			t.Fatal(err)
		}
		err = CheckPops(members, n, tl.NonEmpty, tl.Empty)
		want := fmt.Sprintf("%d of %d ZPOPMIN replies popped a member", members-5, n)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("5 missing members not caught: %v", err)
		}
		if err := CheckPops(members-5, n, tl.NonEmpty, tl.Empty); err != nil {
			t.Fatalf("consistent round rejected: %v", err)
		}
	})

	t.Run("GET prediction", func(t *testing.T) {
		var tl Tally
		if err := s.Round(client, SET, Pipeline, 2000, &tl, nil); err != nil {
			t.Fatal(err)
		}
		for _, r := range s.Written() {
			side.Del(ctx, fmt.Sprintf("key:%012d", r))
		}
		defer clear(s.written) // the keys are gone; so is the session's knowledge
		err := s.Round(client, GET, Pipeline, 2000, &tl, nil)
		if err == nil || !strings.Contains(err.Error(), "answered nil, but this session SET it") {
			t.Fatalf("deleted keys not caught: %v", err)
		}
		if err := s.InStep(); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("reply type", func(t *testing.T) {
		if err := side.Set(ctx, ZSetKey, "a string", 0).Err(); err != nil {
			t.Fatal(err)
		}
		defer side.Del(ctx, ZSetKey)
		var tl Tally
		err := s.Round(client, ZADD, Pipeline, 256, &tl, nil)
		if err == nil || !strings.Contains(err.Error(), "WRONGTYPE") {
			t.Fatalf("ZADD on a string not caught: %v", err)
		}
		if err := s.InStep(); err != nil {
			t.Fatalf("after error replies: %v", err)
		}
	})
}

// TestWholeRounds: every round a benchmark sends is a whole recipe round,
// whatever b.N the testing package chose, so that a ZPOPMIN row's share of
// empty pops (about 57% of a round) never depends on how fast the machine
// ran the previous b.N.
func TestWholeRounds(t *testing.T) {
	for _, p := range []int{Pipeline, 1} {
		round := RoundRequests(p)
		for _, n := range []int{1, 100, round - 1, round, round + 1, 5*round + 7} {
			sizes := RoundSizes(n, p)
			sum := 0
			for i, k := range sizes {
				if k != round {
					t.Errorf("b.N = %d at pipeline=%d: round %d sends %d requests, want a whole round of %d", n, p, i, k, round)
				}
				sum += k
			}
			if sum < n || sum-n >= round {
				t.Errorf("b.N = %d at pipeline=%d: %d rounds send %d requests; want b.N rounded up to whole rounds of %d", n, p, len(sizes), sum, round)
			}
		}
	}
}

// TestRowReportsRequestsSent runs a ZPOPMIN row at -benchtime=300x (less
// than a round), one round's worth and one request more: N must be the
// requests of the whole rounds sent (one, one, two), the server must have
// answered those and the testing package's call at b.N = 1 before them
// (one round more), and ns/op and req/s must both describe the requests
// sent.
func TestRowReportsRequestsSent(t *testing.T) {
	s := need(t)
	bt := flag.Lookup("test.benchtime")
	old := bt.Value.String()
	defer bt.Value.Set(old)
	round := RoundRequests(Pipeline)
	for _, client := range clients {
		for _, c := range []struct{ n, rounds int }{{300, 1}, {round, 1}, {round + 1, 2}} {
			if err := bt.Value.Set(fmt.Sprintf("%dx", c.n)); err != nil {
				t.Fatal(err)
			}
			before, err := CommandStats(s.ctx, s.c)
			if err != nil {
				t.Fatal(err)
			}
			r := testing.Benchmark(func(b *testing.B) { benchRecipe(b, s, client, ZPOPMIN, Pipeline) })
			after, err := CommandStats(s.ctx, s.c)
			if err != nil {
				t.Fatal(err)
			}
			if r.N != c.rounds*round {
				t.Fatalf("client=%s, %dx: N = %d; want the %d requests of %d whole rounds", client, c.n, r.N, c.rounds*round, c.rounds)
			}
			if got := after["zpopmin"].Calls - before["zpopmin"].Calls; got != int64((1+c.rounds)*round) {
				t.Errorf("client=%s, %dx: the server answered %d ZPOPMIN; want %d whole rounds of %d (one at b.N = 1)", client, c.n, got, 1+c.rounds, round)
			}
			if x := float64(r.T.Nanoseconds()) / float64(r.N) * r.Extra["req/s"]; math.Abs(x/1e9-1) > 1e-6 {
				t.Errorf("client=%s, %dx: ns/op x req/s = %v; want 1e9 (both per request sent)", client, c.n, x)
			}
		}
	}
}
