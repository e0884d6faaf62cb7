//go:build linux

package peer

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/child"
)

func TestMain(m *testing.M) {
	if child.Selected() {
		os.Exit(child.Main())
	}
	os.Exit(m.Run())
}

type takeArgs struct{ Fail int } // fail in this round (1-based); 0: never
type takeRound struct{ Round int }
type takeCounts struct {
	Ops, Sum int64
	Pid      int
}

// taker takes tickets from the budget in fd 0's Mem and counts them.
var _ = Register("peer-test-taker", func(l Link) error {
	var a takeArgs
	if err := l.Args(&a); err != nil {
		return err
	}
	m, err := MapMem(l.File(0), BudgetSize)
	if err != nil {
		return err
	}
	defer m.Close()
	b := NewBudget(m, 0)
	for {
		var r takeRound
		ok, err := l.Next(&r)
		if !ok || err != nil {
			return err
		}
		if err := l.Ready(nil); err != nil {
			return err
		}
		if r.Round == a.Fail {
			b.Abort()
			return fmt.Errorf("failing in round %d as asked", r.Round)
		}
		t := NewTaker(b, 7)
		var c takeCounts
		for i, ok := t.Next(); ok; i, ok = t.Next() {
			c.Ops++
			c.Sum += i
		}
		c.Pid = os.Getpid()
		if err := l.Result(c); err != nil {
			return err
		}
	}
})

func sides(m *Mem, thread bool, fail ...int) []Side {
	s := make([]Side, 3)
	for i := range s {
		a := takeArgs{}
		if i < len(fail) {
			a.Fail = fail[i]
		}
		s[i] = Side{Role: "peer-test-taker", Args: a, Fds: []int{m.Fd()}, Thread: thread}
	}
	return s
}

// testBudget is a Mem holding one Budget, closed when t ends.
func testBudget(t *testing.T) (*Mem, *Budget) {
	m, err := NewMem("kbench-peer-test", BudgetSize)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m, NewBudget(m, 0)
}

// keptStart returns the Kept start of three takers (threads or
// processes) asked to fail as sides says, counting its calls in starts.
func keptStart(m *Mem, starts *int, thread bool) func(fail ...int) func() (*Group, *Group, error) {
	return func(fail ...int) func() (*Group, *Group, error) {
		return func() (*Group, *Group, error) {
			*starts++
			run, err := Start(sides(m, thread, fail...))
			return run, run, err
		}
	}
}

type countTimer struct{ starts, stops int }

func (c *countTimer) StartTimer() { c.starts++ }
func (c *countTimer) StopTimer()  { c.stops++ }
func (c *countTimer) ResetTimer() { c.starts, c.stops = 0, 0 }

// TestRounds runs three rounds on the same sides, processes and threads:
// every ticket is taken exactly once per round, by the same processes.
func TestRounds(t *testing.T) {
	for _, thread := range []bool{false, true} {
		t.Run(fmt.Sprintf("thread=%v", thread), func(t *testing.T) {
			m, b := testBudget(t)
			run, err := Start(sides(m, thread))
			if err != nil {
				t.Fatal(err)
			}
			defer run.Close()
			var tm countTimer
			pids := map[int]bool{}
			for round, n := range []int64{1, 1000, 12345} {
				b.Reset(n)
				counts := make([]takeCounts, 3)
				err := run.Round(func(int) any { return takeRound{round + 1} }, &tm, func(i int) any { return &counts[i] })
				if err != nil {
					t.Fatalf("round %d: %v", round, err)
				}
				var ops, sum int64
				for _, c := range counts {
					ops += c.Ops
					sum += c.Sum
					pids[c.Pid] = true
				}
				if ops != n || sum != n*(n-1)/2 {
					t.Errorf("round %d: sides took %d tickets summing to %d, want %d summing to %d", round, ops, sum, n, n*(n-1)/2)
				}
			}
			if tm.starts != 3 || tm.stops != 3 {
				t.Errorf("timer started %d and stopped %d times over 3 rounds, want 3 and 3", tm.starts, tm.stops)
			}
			want := 3
			if thread {
				want = 1 // this process
				if !pids[os.Getpid()] {
					t.Errorf("thread sides reported pids %v, want this process's %d", pids, os.Getpid())
				}
			}
			if len(pids) != want {
				t.Errorf("sides ran in %d processes over 3 rounds, want %d: %v", len(pids), want, pids)
			}
			if err := run.Close(); err != nil {
				t.Fatal(err)
			}
			if left, err := child.Children(); err != nil || len(left) != 0 {
				t.Errorf("after Close: children %v (%v), want none", left, err)
			}
		})
	}
}

// TestFailedRound: a side that fails in round 2 fails that round with its
// error, breaks the run, and Close returns the same error and leaves
// nothing running.
func TestFailedRound(t *testing.T) {
	for _, thread := range []bool{false, true} {
		t.Run(fmt.Sprintf("thread=%v", thread), func(t *testing.T) {
			m, b := testBudget(t)
			run, err := Start(sides(m, thread, 0, 2))
			if err != nil {
				t.Fatal(err)
			}
			b.Reset(100)
			if err := run.Round(func(int) any { return takeRound{1} }, nil, nil); err != nil {
				t.Fatalf("round 1: %v", err)
			}
			b.Reset(100000)
			err = run.Round(func(int) any { return takeRound{2} }, nil, nil)
			if err == nil || !strings.Contains(err.Error(), "failing in round 2 as asked") {
				t.Fatalf("round 2: %v, want the side's failure", err)
			}
			if err3 := run.Round(func(int) any { return takeRound{3} }, nil, nil); !errors.Is(err3, err) && err3 != err {
				t.Errorf("round 3 on a broken run: %v, want round 2's error", err3)
			}
			if cerr := run.Close(); cerr != err {
				t.Errorf("Close: %v, want round 2's error", cerr)
			}
			if left, err := child.Children(); err != nil || len(left) != 0 {
				t.Errorf("after a failed round: children %v (%v), want none", left, err)
			}
		})
	}
}

// TestKept starts sides once for many Gets with one key, again for a
// new key, and again after a failed round.
func TestKept(t *testing.T) {
	m, b := testBudget(t)
	var k Kept[*Group]
	defer k.Close()
	starts := 0
	start := keptStart(m, &starts, true)
	for range 3 {
		run, err := k.Get("a", start())
		if err != nil {
			t.Fatal(err)
		}
		b.Reset(10)
		if err := run.Round(func(int) any { return takeRound{1} }, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	if starts != 1 {
		t.Errorf("3 Gets of one key started the sides %d times, want 1", starts)
	}
	run, err := k.Get("b", start(1))
	if err != nil || starts != 2 {
		t.Fatalf("a new key: %v, %d starts, want 2", err, starts)
	}
	b.Reset(10)
	if err := run.Round(func(int) any { return takeRound{1} }, nil, nil); err == nil {
		t.Fatal("a side asked to fail did not fail its round")
	}
	if _, err := k.Get("b", start()); err != nil || starts != 3 {
		t.Errorf("Get after a failed round: %v, %d starts, want a fresh run (3)", err, starts)
	}
	if err := k.Close(); err != nil {
		t.Error(err)
	}
}

// TestDefer: Close runs the deferred functions once, after the sides
// have ended and been reaped, last first, with the sides' error (nil
// after clean rounds, the failed round's after a failed one), and joins
// their errors to its own.
func TestDefer(t *testing.T) {
	for _, fail := range []bool{false, true} {
		m, err := NewMem("kbench-peer-test", BudgetSize)
		if err != nil {
			t.Fatal(err)
		}
		b := NewBudget(m, 0)
		var failAt []int
		if fail {
			failAt = []int{1}
		}
		run, err := Start(sides(m, false, failAt...))
		if err != nil {
			t.Fatal(err)
		}
		var order []string
		var got []error
		run.Defer(func(sides error) error {
			order = append(order, "first")
			got = append(got, sides)
			if left, err := child.Children(); err != nil || len(left) != 0 {
				t.Errorf("deferred function ran with children %v (%v) left", left, err)
			}
			return m.Close()
		})
		run.Defer(func(sides error) error {
			order = append(order, "second")
			got = append(got, sides)
			return errors.New("deferred failure")
		})
		b.Reset(100)
		rerr := run.Round(func(int) any { return takeRound{1} }, nil, nil)
		if fail != (rerr != nil) {
			t.Fatalf("fail=%v: round: %v", fail, rerr)
		}
		err = run.Close()
		if err == nil || !strings.Contains(err.Error(), "deferred failure") || fail && !strings.Contains(err.Error(), "failing in round 1 as asked") {
			t.Errorf("fail=%v: Close: %v, want the round's and the deferred function's errors", fail, err)
		}
		if err2 := run.Close(); err2 != err {
			t.Errorf("second Close: %v, want the first's %v", err2, err)
		}
		if fmt.Sprint(order) != "[second first]" {
			t.Errorf("deferred functions ran as %v, want [second first], once each", order)
		}
		for _, g := range got {
			if g != rerr {
				t.Errorf("fail=%v: a deferred function got the sides' error %v, want the round's %v", fail, g, rerr)
			}
		}
	}
}
