//go:build linux

package region

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/kbench/kbench/internal/fingerprint"
	"github.com/kbench/kbench/internal/unit"
)

// Instrument measures one run of a row while the region is started. See
// the package doc for the order of calls.
type Instrument interface {
	Start() error
	Stop() error
	Reset() error
	Report(ops int64, r Reporter)
	Close() error
}

// Reporter receives an instrument's per-op results for the row.
type Reporter interface {
	// Metric reports v in unit, which must be listed in unit.Units.
	Metric(v float64, unit string)
	// Log adds a note to the row's output (shown with -v or on failure).
	Log(args ...any)
}

// Provider opens an instrument for each run of a row.
type Provider interface {
	// Name names the provider in messages ("counters", "profile").
	Name() string
	// Setup runs once per test binary, after options are parsed, and
	// returns fingerprint lines saying what the provider will measure
	// here. An error stops the run before any test.
	Setup() ([]fingerprint.Field, error)
	// Open returns the instrument for one run of row b, or nil when there
	// is nothing to measure. An error is logged and the row runs without it.
	Open(b *testing.B) (Instrument, error)
}

var (
	mu        sync.Mutex
	providers []Provider
	setUp     bool
)

// Register adds a provider; call it from an init function.
func Register(p Provider) {
	mu.Lock()
	defer mu.Unlock()
	providers = append(providers, p)
}

// Setup runs every provider's Setup once and returns their fingerprint
// lines; benchmain calls it before any test. Regions opened before Setup
// (or in a test binary that never calls it) have no instruments.
func Setup() ([]fingerprint.Field, error) {
	mu.Lock()
	defer mu.Unlock()
	var fields []fingerprint.Field
	var errs []error
	for _, p := range providers {
		f, err := p.Setup()
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", p.Name(), err))
		}
		fields = append(fields, f...)
	}
	if err := errors.Join(errs...); err != nil {
		return fields, err
	}
	setUp = true
	return fields, nil
}

func active() []Provider {
	mu.Lock()
	defer mu.Unlock()
	if !setUp {
		return nil
	}
	return providers
}

// Region is the timed region of one run of a row.
type Region struct {
	b       *testing.B
	insts   []*slot
	running bool // the benchmark timer runs
	counted bool // instruments are started
	started bool // instruments were started since the last reset
	ended   bool
}

type slot struct {
	name   string
	inst   Instrument
	failed bool
	closed bool
}

// New opens the registered instruments for one run of b without starting
// them or touching the timer; they start at the first ResetTimer or
// StartTimer. The timer is taken to be running, as it is when testing
// calls a benchmark function; call StopTimer on the Region, not on b, from
// then on.
func New(b *testing.B) *Region {
	r := &Region{b: b, running: true}
	for _, p := range active() {
		inst, err := p.Open(b)
		if err != nil {
			b.Logf("region: %s: %v; this run has no %s metrics", p.Name(), err, p.Name())
			continue
		}
		if inst != nil {
			r.insts = append(r.insts, &slot{name: p.Name(), inst: inst})
		}
	}
	if len(r.insts) > 0 {
		b.Cleanup(r.close)
	}
	watch(b)
	return r
}

var (
	failedMu sync.Mutex
	failed   []string
	watched  = map[*testing.B]bool{}
)

// watch notes b's failure when its run ends, once per run however many
// Regions it opens. It sees what fails before its cleanup runs: the row
// itself and the cleanups registered after its first Region; a row that
// fails before it opens one, or in a cleanup registered earlier, is not
// noted.
func watch(b *testing.B) {
	failedMu.Lock()
	defer failedMu.Unlock()
	if watched[b] {
		return
	}
	watched[b] = true
	b.Cleanup(func() {
		failedMu.Lock()
		defer failedMu.Unlock()
		delete(watched, b)
		if b.Failed() {
			failed = append(failed, b.Name())
		}
	})
}

// Failed lists the rows whose run failed, each as often as it failed.
// The testing package prints a failure in a row's second or later -count
// but does not fail the test binary for it (Go 1.26: it runs those counts
// apart from the row's parent), so benchmain checks this list after the
// run.
func Failed() []string {
	failedMu.Lock()
	defer failedMu.Unlock()
	return slices.Clone(failed)
}

// Begin opens the instruments and starts the region: b.ResetTimer with
// the instruments started.
func Begin(b *testing.B) *Region {
	r := New(b)
	r.ResetTimer()
	return r
}

// ResetTimer is b.ResetTimer: it discards the time and counts so far and,
// if the timer runs, starts counting anew.
func (r *Region) ResetTimer() {
	r.stopInstruments()
	r.started = false
	r.each(false, func(i Instrument) error { return i.Reset() })
	if r.running {
		r.startInstruments()
	}
	r.b.ResetTimer()
}

// StartTimer is b.StartTimer with the instruments started.
func (r *Region) StartTimer() {
	if r.running {
		return
	}
	r.startInstruments()
	r.running = true
	r.b.StartTimer()
}

// StopTimer is b.StopTimer with the instruments stopped.
func (r *Region) StopTimer() {
	r.b.StopTimer()
	r.running = false
	r.stopInstruments()
}

// Timer is the benchmark timer that a row's rounds drive: a Region, a
// ClockTimer (for sides whose CPU time is counted after the clock), or
// the *testing.B. internal/rounds stops and zeroes it before the first
// round; each round starts it at its go and stops it once its ops are
// done (internal/peer's rounds at the last result), so that a row's
// rounds add up.
type Timer interface {
	StartTimer()
	StopTimer()
	ResetTimer()
}

// StopClock stops the benchmark timer and leaves the instruments counting;
// StopTimer stops both.
func (r *Region) StopClock() {
	r.b.StopTimer()
	r.running = false
}

// ClockTimer is a Region whose StopTimer stops the benchmark clock only
// (StopClock): the instruments count on until End. Rows whose peers are
// child processes pass it where they take a timer, so that what the
// children do after their last result (the end of a round, an exit) is
// counted but not timed: see the package doc.
type ClockTimer struct{ *Region }

// StopTimer stops the benchmark clock and leaves the instruments counting.
func (c ClockTimer) StopTimer() { c.Region.StopClock() }

// Pause is StopTimer, for rows with several timed phases.
func (r *Region) Pause() { r.StopTimer() }

// Resume is StartTimer.
func (r *Region) Resume() { r.StartTimer() }

// End stops the region and reports each instrument's metrics per op of
// b.N.
func (r *Region) End() { r.EndOps(int64(r.b.N)) }

// EndOps stops the region and reports each instrument's metrics per op,
// for ops ops. It may be called once; later calls do nothing.
func (r *Region) EndOps(ops int64) {
	if r.ended {
		return
	}
	r.ended = true
	r.StopTimer()
	for _, s := range r.insts {
		if s.failed || !r.started {
			continue // a run that failed before its timed work reports nothing
		}
		if ops <= 0 {
			r.b.Logf("region: %s: %d ops, no per-op metrics", s.name, ops)
			continue
		}
		s.inst.Report(ops, reporter{r.b, s.name})
	}
	r.close()
}

func (r *Region) startInstruments() {
	if r.counted {
		return
	}
	r.counted = true
	r.started = true
	r.each(false, func(i Instrument) error { return i.Start() })
}

func (r *Region) stopInstruments() {
	if !r.counted {
		return
	}
	r.counted = false
	r.each(true, func(i Instrument) error { return i.Stop() })
}

// each calls f on every instrument still working, in registration order
// or in reverse; an instrument that fails is closed and left out.
func (r *Region) each(reverse bool, f func(Instrument) error) {
	for k := range r.insts {
		if reverse {
			k = len(r.insts) - 1 - k
		}
		s := r.insts[k]
		if s.failed {
			continue
		}
		if err := f(s.inst); err != nil {
			s.failed = true
			r.b.Logf("region: %s: %v; this run has no %s metrics", s.name, err, s.name)
			r.closeSlot(s)
		}
	}
}

func (r *Region) close() {
	for _, s := range r.insts {
		r.closeSlot(s)
	}
}

func (r *Region) closeSlot(s *slot) {
	if s.closed {
		return
	}
	s.closed = true
	if err := s.inst.Close(); err != nil {
		r.b.Logf("region: %s: close: %v", s.name, err)
	}
}

// reporter checks units against unit.Units. It reports failures with
// Errorf, not Fatalf, since End may run on a thread other than the row's.
type reporter struct {
	b    *testing.B
	name string
}

func (p reporter) Metric(v float64, name string) {
	if _, ok := unit.Units[name]; !ok {
		p.b.Errorf("region: %s: unit %q has no entry in unit.Units: add it to the package's internal/registry entry", p.name, name)
		return
	}
	p.b.ReportMetric(v, name)
}

func (p reporter) Log(args ...any) {
	p.b.Log(append([]any{"region: " + p.name + ":"}, args...)...)
}
