//go:build linux

// Package rounds runs a benchmark row as timed rounds within one call of
// its benchmark function, for rows whose ops run elsewhere than in the
// calling goroutine: in child processes or threads that do a round's ops
// between a go and their results (internal/peer), or in whole rounds of
// the reference's own size (redisbench's 100,096 requests).
//
// Such a row cannot use b.Loop, whose iterations are ops done in the
// calling goroutine, and under the testing package's b.N ramp it throws
// work away: every trial before the reported one (b.N = 1, 100, 10,000,
// then about a second's worth) is run and discarded, a quarter to two
// thirds of the reported trial for ops of 30-80 us (netbench's TCP rows;
// results/2026-12-02-suite-rounds.md). Loop does what b.Loop does for
// such a row instead: it sizes the rounds as b.Loop sizes its iterations
// (one op, then the testing package's predictN over the ops and time so
// far, until the timer has run -test.benchtime), times every round, and
// reports them all: N is the ops the rounds did and the time is theirs,
// so N x ns/op is the row's timed work and no round is discarded.
//
// The row's first ops are so in its figures, as they are in a b.Loop
// row's; a row whose sides outlive a call (peer.Kept) is warm from its
// second -count on. Under a fixed -test.benchtime=Nx the testing package
// calls the function with b.N = 1 and then N, and Loop runs one round of
// b.N ops each time, as a b.N row does.
//
// Loop sets b.N to the ops the rounds did, once they are done: the testing
// package reads b.N back as the result's iteration count (N in the
// output, the divisor of ns/op), which is how the reported N comes to be
// the ops that were timed. The round's timer contract: the timer is
// stopped and zeroed before the first round, and each round starts it
// (StartTimer) at its go and stops it once its ops are done, with its
// untimed setup and checks outside.
package rounds

import (
	"flag"
	"fmt"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/region"
	"github.com/kbench/kbench/internal/testflags"
)

// Func runs one round of at least n ops (n >= 1), starting the timer at
// its go and stopping it when the ops are done, and returns the ops it
// did: n, or more for a row whose rounds are whole (redisbench). A round
// that fails returns its error, with the ops it did.
type Func func(n int64) (done int64, err error)

// Loop runs round until the timer has run the benchmark time, as b.Loop
// would, and sets b.N to the ops done (see the package doc). It returns
// the ops done and the first round's error; after an error no other
// round runs.
func Loop(b *testing.B, t region.Timer, round Func) (int64, error) {
	fixed, d, err := benchtime()
	if err != nil {
		return 0, err
	}
	t.StopTimer()
	t.ResetTimer()
	var total int64
	defer func() { b.N = int(total) }()
	if fixed {
		asked := max(int64(b.N), 1)
		done, err := round(asked)
		total = done
		return total, checkDone(done, asked, err)
	}
	for want := int64(1); ; {
		asked := want - total
		done, err := round(asked)
		total += done
		if err = checkDone(done, asked, err); err != nil {
			return total, err
		}
		elapsed := b.Elapsed()
		if elapsed >= d || total >= maxOps {
			return total, nil
		}
		want = next(d, total, elapsed)
	}
}

// maxOps is the testing package's cap on b.N (maxBenchPredictIters).
const maxOps = 1e9

// next is the cumulative op count to reach next, as b.Loop's scaling
// computes it: the ops so far over their time, times the goal, plus a
// fifth, at most 100 times the ops so far and at least one more
// (testing's predictN).
func next(goal time.Duration, ops int64, elapsed time.Duration) int64 {
	ns := max(elapsed.Nanoseconds(), 1)
	// goal x ops can pass int64 for fast rounds: ops < 1e9 and goals
	// of hours are 4e21; in float64 it cannot, and a rounding of the
	// prediction is no matter.
	n := int64(float64(goal.Nanoseconds()) * float64(ops) / float64(ns))
	n += n / 5
	n = min(n, 100*ops)
	n = max(n, ops+1)
	return min(n, maxOps)
}

// checkDone is a round's error, or one for a round that reported fewer
// ops than it was asked for without one.
func checkDone(done, asked int64, err error) error {
	if err == nil && done < asked {
		return fmt.Errorf("rounds: a round of %d ops reported %d done", asked, done)
	}
	return err
}

// benchtime reads -test.benchtime: a count of iterations ("100x", fixed)
// or a duration.
func benchtime() (fixed bool, d time.Duration, err error) {
	f := flag.Lookup("test.benchtime")
	if f == nil {
		return false, 0, fmt.Errorf("rounds: no -test.benchtime flag: Loop needs the testing package's flags (a test binary)")
	}
	fixed, d, err = testflags.Benchtime(f.Value.String())
	if err != nil {
		return false, 0, fmt.Errorf("rounds: %w", err)
	}
	return fixed, d, nil
}
