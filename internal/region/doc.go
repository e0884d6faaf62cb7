//go:build linux

// Package region measures the timed region of a benchmark row: the span
// between the row's ResetTimer (or StartTimer) and its StopTimer, summed
// over the row's timed phases. A Region drives the benchmark timer and the
// registered instruments (kernel counters, a sampling profiler) together,
// so that the instruments see exactly the work the timer sees.
//
// # Rows
//
// A row with one timed phase:
//
//	r := region.Begin(b) // b.ResetTimer(); instruments start
//	work(b.N)
//	r.End() // b.StopTimer(); instruments stop, report per-op metrics, close
//
// A row with several timed phases calls r.Pause() and r.Resume() (which
// are b.StopTimer and b.StartTimer with the instruments stopped and
// started) around its untimed work, and ends with r.End(). A row whose op
// count differs from b.N ends with r.EndOps(n). A Region also has
// ResetTimer, StartTimer and StopTimer methods, so it can be passed where
// code takes the benchmark's timer (an interface with those methods, or the
// method values r.ResetTimer and r.StopTimer as callbacks); region.New(b)
// opens a Region without starting anything, for that use.
//
// A row whose other side runs in child processes passes
// region.ClockTimer{r} (or r.StopClock) instead: its StopTimer stops the
// benchmark clock when the children have reported, and the instruments
// run on until End. The counters read a live child's CPU time from its
// /proc totals and a reaped one's from RUSAGE_CHILDREN (a child's threads
// take their CPU time with them when they exit); a row whose children
// end within its timed work so has their exit counted, but not timed, and
// a row whose sides outlive a call (internal/peer) has them counted while
// alive. A row of several rounds (internal/rounds) so counts from its
// first round's go to End, the untimed hand-offs between rounds included
// (a ready and a go per round, a few per call).
//
// Every method may be called from any goroutine or OS thread, including a
// throw-away locked thread of package thread (the instruments count the
// whole process or machine, not the calling thread), but not from two at
// once: calls on one Region must be ordered, as calls on a testing.B are.
// Failures of an instrument never fail the row: a row without its
// counters is still a measurement. They are logged (b.Log) and the
// instrument's metrics are left out of that row.
//
// # Instruments
//
// An instrument package registers a Provider once, from an init function:
//
//	func init() { region.Register(myProvider{}) }
//
// and is imported (for its side effect) by internal/benchmain, the
// TestMain of every benchmark package. benchmain calls Setup once per test
// binary, after the KBENCH_* options are parsed and before any test runs;
// each provider's Setup returns the fingerprint lines that describe what
// it will measure on this machine (a missing PMU, the scope, a counter
// left out), or an error that stops the run.
//
// For every run of a row (testing runs a benchmark function several times
// while it finds b.N), New calls each provider's Open. An Open that
// returns a nil Instrument and a nil error means "nothing to measure here"
// (the provider is switched off). Then:
//
//   - Start begins or resumes counting; Stop pauses it. The region calls
//     Start just before the benchmark timer starts (ResetTimer while
//     running, StartTimer) and Stop just after it stops, so counts
//     accumulate over every timed phase of the run. Instruments are
//     started in registration order and stopped in reverse order.
//   - Reset discards what was counted so far (the row called ResetTimer
//     again); it is called while stopped, and is followed by Start when
//     the timer runs.
//   - Report is called once, after the last Stop, with the run's op count;
//     the instrument reports its per-op values with Reporter.Metric, in
//     units listed in unit.Units (a unit missing there is a bug and fails
//     the row), and may Log a note. Metrics reported in the last run of a
//     row are the ones go test prints.
//   - Close releases the instrument; it is called exactly once, after
//     Report or when the run ends early (a failed row is closed by a
//     b.Cleanup the region registers).
//
// Start and Stop are on the timed path's edges: keep them short (a few
// ioctls), and do slow work (opening, reading /proc) in Open or Report
// where possible. An instrument's Start, Stop and Reset errors are logged
// once per run and the instrument stops reporting for that run.
package region
