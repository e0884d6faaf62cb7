//go:build linux

package rounds

import (
	"errors"
	"flag"
	"strings"
	"testing"
	"time"
)

// setBenchtime sets -test.benchtime for one test.
func setBenchtime(t *testing.T, v string) {
	t.Helper()
	f := flag.Lookup("test.benchtime")
	old := f.Value.String()
	if err := f.Value.Set(v); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Value.Set(old) })
}

// spin busy-waits d, so that a round's time is its ops' and not a
// sleep's wake-up.
func spin(d time.Duration) {
	for t0 := time.Now(); time.Since(t0) < d; {
	}
}

// fakeRow is a row whose round of n ops spins perOp each, after an
// untimed setup of setup; whole rounds the ops up to whole rounds of
// that many.
type fakeRow struct {
	perOp, setup time.Duration
	whole        int64
	calls        int     // of the benchmark function
	asked        []int64 // per round
	spent        time.Duration
}

func (f *fakeRow) bench(b *testing.B) {
	f.calls++
	spin(f.setup) // before Loop: the row's setup, untimed
	_, err := Loop(b, b, func(n int64) (int64, error) {
		f.asked = append(f.asked, n)
		spin(f.setup)
		if f.whole > 0 {
			n = (n + f.whole - 1) / f.whole * f.whole
		}
		b.StartTimer()
		t0 := time.Now()
		spin(time.Duration(n) * f.perOp)
		f.spent += time.Since(t0)
		b.StopTimer()
		return n, nil
	})
	if err != nil {
		b.Fatal(err)
	}
}

// TestRunTimesEveryRound runs a fake row under a duration: one call of
// the function, rounds of 1 op and then as b.Loop scales, every round's
// ops in N and their time, and none of the untimed setup, in the result.
func TestRunTimesEveryRound(t *testing.T) {
	// 500ms: the second round is capped at 100x unless the first (one op
	// of 20 us) took over 6 ms, a stall a loaded machine rarely makes.
	setBenchtime(t, "500ms")
	f := &fakeRow{perOp: 20 * time.Microsecond, setup: 10 * time.Millisecond}
	r := testing.Benchmark(f.bench)
	if f.calls != 1 {
		t.Errorf("the benchmark function ran %d times; want 1 (no trial thrown away)", f.calls)
	}
	var sum int64
	for _, n := range f.asked {
		sum += n
	}
	if len(f.asked) < 3 || f.asked[0] != 1 || f.asked[1] != 99 {
		t.Errorf("rounds asked %v; want 1, then 99 (b.Loop's 100x cap), then more", f.asked)
	}
	if int64(r.N) != sum {
		t.Errorf("N = %d; the rounds did %d ops (%v)", r.N, sum, f.asked)
	}
	if r.T < 500*time.Millisecond {
		t.Errorf("timed %v; want at least -test.benchtime=500ms", r.T)
	}
	// The timer held the rounds' spins and little else: less than one of
	// the setups (10 ms a round and one before), all outside it.
	if extra := r.T - f.spent; extra < 0 || extra >= f.setup {
		t.Errorf("timed %v for %v of rounds' ops (%d setups of %v outside the timer)", r.T, f.spent, len(f.asked)+1, f.setup)
	}
	t.Logf("rounds %v: N=%d, %v, %.0f ns/op", f.asked, r.N, r.T, float64(r.T.Nanoseconds())/float64(r.N))
}

// TestRunWholeRounds: a row that rounds its ops up to whole rounds has
// them all counted.
func TestRunWholeRounds(t *testing.T) {
	setBenchtime(t, "50ms")
	f := &fakeRow{perOp: 5 * time.Microsecond, whole: 1000}
	r := testing.Benchmark(f.bench)
	if r.N == 0 || r.N%1000 != 0 {
		t.Errorf("N = %d; want whole rounds of 1000 (asked %v)", r.N, f.asked)
	}
	if f.calls != 1 {
		t.Errorf("the benchmark function ran %d times; want 1", f.calls)
	}
}

// TestRunFixedCount: under -test.benchtime=Nx the testing package calls
// the function with b.N = 1 and then N, and each call is one round of b.N.
func TestRunFixedCount(t *testing.T) {
	setBenchtime(t, "7x")
	f := &fakeRow{perOp: time.Microsecond}
	r := testing.Benchmark(f.bench)
	if r.N != 7 || f.calls != 2 || len(f.asked) != 2 || f.asked[0] != 1 || f.asked[1] != 7 {
		t.Errorf("N = %d after %d calls asking %v; want 7 after two calls asking 1 and 7", r.N, f.calls, f.asked)
	}
}

// TestRunStopsAtAFailedRound: a round's error ends the rows' rounds and
// is returned; a round that did fewer ops than asked without one is an
// error too.
func TestRunStopsAtAFailedRound(t *testing.T) {
	setBenchtime(t, "1s")
	boom := errors.New("boom")
	for _, c := range []struct {
		name  string
		round func(n int64, k int) (int64, error)
		want  string
	}{
		{"error", func(n int64, k int) (int64, error) {
			if k == 2 {
				return 3, boom
			}
			return n, nil
		}, "boom"},
		{"short", func(n int64, k int) (int64, error) {
			if k == 2 {
				return n - 1, nil
			}
			return n, nil
		}, "reported"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var (
				rounds int
				err    error
				total  int64
			)
			testing.Benchmark(func(b *testing.B) {
				total, err = Loop(b, b, func(n int64) (int64, error) {
					rounds++
					b.StartTimer()
					spin(time.Millisecond)
					b.StopTimer()
					return c.round(n, rounds)
				})
				if err != nil {
					b.Fatal(err) // as a row does: no other trial
				}
			})
			if err == nil || !strings.Contains(err.Error(), c.want) || rounds != 2 {
				t.Errorf("after %d rounds (%d ops): %v; want an error with %q at the second round", rounds, total, err, c.want)
			}
		})
	}
}

// TestNext checks the scaling against testing's predictN, worked by hand.
func TestNext(t *testing.T) {
	for _, c := range []struct {
		goal    time.Duration
		ops     int64
		elapsed time.Duration
		want    int64
	}{
		{time.Second, 1, 50 * time.Microsecond, 100},              // 24000, capped at 100x
		{time.Second, 100, 5 * time.Millisecond, 10000},           // 24000, capped
		{time.Second, 10000, 500 * time.Millisecond, 24000},       // 1s/50us x 1.2
		{time.Second, 10000, 2 * time.Second, 10001},              // past the goal: one more
		{time.Second, 5, 0, 500},                                  // no time measured: capped
		{time.Hour, 900_000_000, time.Millisecond, 1_000_000_000}, // no overflow, capped at 1e9
		{3 * time.Second, 1000, 100 * time.Millisecond, 36000},    // 30000 x 1.2
	} {
		if got := next(c.goal, c.ops, c.elapsed); got != c.want {
			t.Errorf("next(%v, %d, %v) = %d; want %d", c.goal, c.ops, c.elapsed, got, c.want)
		}
	}
}
