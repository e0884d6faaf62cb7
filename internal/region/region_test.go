//go:build linux

package region

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/fingerprint"
	"github.com/kbench/kbench/internal/thread"
)

// fake records the calls it gets and counts "work" while started.
type fake struct {
	name     string
	calls    *[]string
	started  bool
	count    int64 // ticks seen while started
	failOn   string
	openErr  error
	closeCnt int
}

func (f *fake) Name() string { return f.name }
func (f *fake) Setup() ([]fingerprint.Field, error) {
	return []fingerprint.Field{{Key: f.name, Value: "on"}}, nil
}
func (f *fake) Open(b *testing.B) (Instrument, error) {
	*f.calls = nil
	f.count, f.closeCnt = 0, 0
	if f.openErr != nil {
		return nil, f.openErr
	}
	return f, nil
}
func (f *fake) call(c string) error {
	*f.calls = append(*f.calls, f.name+"."+c)
	if c == f.failOn {
		return errors.New(c + " failed")
	}
	return nil
}
func (f *fake) Start() error { f.started = true; return f.call("start") }
func (f *fake) Stop() error  { f.started = false; return f.call("stop") }
func (f *fake) Reset() error { f.count = 0; return f.call("reset") }
func (f *fake) Report(ops int64, r Reporter) {
	f.call("report")
	unit := "loops/s"
	if f.name == "z" {
		unit = "ops/s"
	}
	r.Metric(float64(f.count)/float64(ops), unit)
}
func (f *fake) Close() error { f.closeCnt++; return f.call("close") }

// tick is work done inside or outside the region.
func (f *fake) tick() {
	if f.started {
		f.count++
	}
}

// withProviders registers ps for the duration of the test.
func withProviders(t *testing.T, ps ...Provider) {
	t.Helper()
	mu.Lock()
	savedP, savedS := providers, setUp
	providers, setUp = nil, false
	mu.Unlock()
	t.Cleanup(func() {
		mu.Lock()
		providers, setUp = savedP, savedS
		mu.Unlock()
	})
	for _, p := range ps {
		Register(p)
	}
	fields, err := Setup()
	if err != nil || len(fields) != len(ps) {
		t.Fatalf("Setup: %v, %v", fields, err)
	}
}

func TestRegionOrderAndPhases(t *testing.T) {
	var calls []string
	a := &fake{name: "a", calls: &calls}
	z := &fake{name: "z", calls: &calls}
	withProviders(t, a, z)
	var got []string
	res := Measure(t, 100, func(b *testing.B) {
		a.tick() // before the region: not counted
		r := Begin(b)
		for range b.N {
			a.tick()
		}
		r.Pause()
		a.tick() // untimed: not counted
		a.tick()
		r.Resume()
		a.tick()
		r.EndOps(int64(b.N) + 1)
		got = slices.Clone(calls)
	})
	want := []string{"a.reset", "z.reset", "a.start", "z.start", "z.stop", "a.stop", "a.start", "z.start", "z.stop", "a.stop", "a.report", "z.report", "a.close", "z.close"}
	if !slices.Equal(got, want) {
		t.Errorf("calls\n got %v\nwant %v", got, want)
	}
	if v := res.Extra["loops/s"]; v != 1 {
		t.Errorf("per-op value %v, want 1 (b.N+1 ticks over b.N+1 ops)", v)
	}
}

func TestRegionAsTimer(t *testing.T) {
	var calls []string
	a := &fake{name: "a", calls: &calls}
	withProviders(t, a)
	type timer interface {
		ResetTimer()
		StopTimer()
	}
	res := Measure(t, 100, func(b *testing.B) {
		r := New(b)
		a.tick() // setup before the callee resets: not counted
		var tm timer = r
		run := func(t timer, reset func()) {
			reset()
			for range b.N {
				a.tick()
			}
			t.StopTimer()
			a.tick()
		}
		run(tm, r.ResetTimer)
		r.End()
	})
	if v := res.Extra["loops/s"]; v != 1 {
		t.Errorf("per-op value %v, want 1", v)
	}
}

func TestRegionOnThrowAwayThread(t *testing.T) {
	var calls []string
	a := &fake{name: "a", calls: &calls}
	withProviders(t, a)
	res := Measure(t, 100, func(b *testing.B) {
		err := thread.Run(func() error {
			r := Begin(b)
			for range b.N {
				a.tick()
			}
			r.End()
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	})
	if v := res.Extra["loops/s"]; v != 1 || a.closeCnt != 1 {
		t.Errorf("per-op value %v (want 1), closed %d times (want 1)", v, a.closeCnt)
	}
}

func TestFailingInstrumentLeavesRow(t *testing.T) {
	var calls []string
	a := &fake{name: "a", calls: &calls, failOn: "start"}
	z := &fake{name: "z", calls: &calls}
	withProviders(t, a, z)
	res := Measure(t, 100, func(b *testing.B) {
		r := Begin(b)
		for range b.N {
			z.tick()
		}
		r.End()
	})
	if res.N == 0 {
		t.Fatal("row failed")
	}
	if strings.Contains(strings.Join(calls, " "), "a.report") || a.closeCnt != 1 {
		t.Errorf("failed instrument reported or not closed once: %v", calls)
	}
	if res.Extra["ops/s"] != 1 {
		t.Errorf("working instrument lost its metric: %v", res.Extra)
	}
}

func TestNoSetupNoInstruments(t *testing.T) {
	var calls []string
	mu.Lock()
	savedP, savedS := providers, setUp
	providers, setUp = []Provider{&fake{name: "a", calls: &calls}}, false
	mu.Unlock()
	t.Cleanup(func() { mu.Lock(); providers, setUp = savedP, savedS; mu.Unlock() })
	Measure(t, 100, func(b *testing.B) { r := Begin(b); r.End() })
	if len(calls) != 0 {
		t.Errorf("instrument used before Setup: %v", calls)
	}
}

// badUnit reports in a unit unit.Units lacks.
type badUnit struct{ fake }

func (f *badUnit) Open(b *testing.B) (Instrument, error) { return f, nil }
func (f *badUnit) Report(ops int64, r Reporter)          { r.Metric(1, "bogus/op") }

func TestUnknownUnitFailsRow(t *testing.T) {
	var calls []string
	withProviders(t, &badUnit{fake{name: "bad", calls: &calls}})
	res := Measure(t, 10, func(b *testing.B) { r := Begin(b); r.End() })
	if res.N != 0 {
		t.Errorf("a metric in a unit without a direction passed: %+v", res)
	}
}

// TestCountWithoutClock checks that StopClock lets a row count work the
// testing package's timer does not cover (region.ClockTimer's rows):
// the instruments see every tick between StartTimer and StopTimer, the
// benchmark timer only those before StopClock.
func TestCountWithoutClock(t *testing.T) {
	var calls []string
	a := &fake{name: "a", calls: &calls}
	withProviders(t, a)
	res := Measure(t, 10, func(b *testing.B) {
		r := New(b)
		r.StopTimer()
		a.tick() // before the region: not counted
		r.ResetTimer()
		r.StartTimer() // timed and counted
		a.tick()
		r.StopClock() // counted only
		a.tick()
		r.StopTimer()
		a.tick() // neither
		r.EndOps(2)
	})
	if v := res.Extra["loops/s"]; v != 1 {
		t.Errorf("per-op value %v, want 1 (2 counted ticks over 2 ops)", v)
	}
}
