//go:build linux

package counters

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/kbench/kbench/internal/fingerprint"
	"github.com/kbench/kbench/internal/perfevent"
	"github.com/kbench/kbench/internal/region"
)

// TestMain sets up every counter (all), which the tests of the event
// counters need; TestSetupDefault checks the default.
func TestMain(m *testing.M) {
	*requested = "all"
	if _, err := region.Setup(); err != nil {
		panic(err)
	}
	os.Exit(m.Run())
}

func TestSelection(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{"on", "task-clock", ""},
		{"all", "task-clock context-switches cpu-migrations page-faults cycles instructions branch-misses cache-misses iTLB-load-misses softirqs ipis", ""},
		{"off", "", ""},
		{"softirqs, task-clock", "softirqs task-clock", ""},
		{"cs", "", `"cs" is not a counter`},
		{"task-clock,task-clock", "", "listed twice"},
		{"task-clock,", "", `"" is not a counter`},
	} {
		if err := validate(tc.in); (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("validate(%q) = %v, want %q", tc.in, err, tc.err)
		}
		if tc.err != "" {
			continue
		}
		sel, err := selection(tc.in)
		var names []string
		for _, c := range sel {
			names = append(names, c.name)
		}
		if err != nil || strings.Join(names, " ") != tc.want {
			t.Errorf("selection(%q) = %v, %v; want %s", tc.in, names, err, tc.want)
		}
	}
}

// withRequested runs Setup of a fresh provider for KBENCH_COUNTERS=v.
func withRequested(t *testing.T, v string) (*provider, []fingerprint.Field) {
	t.Helper()
	saved := *requested
	*requested = v
	t.Cleanup(func() { *requested = saved })
	p := &provider{}
	fields, err := p.Setup()
	if err != nil {
		t.Fatal(err)
	}
	return p, fields
}

func field(fields []fingerprint.Field, key string) string {
	for _, f := range fields {
		if f.Key == key {
			return f.Value
		}
	}
	return ""
}

// TestSetupDefault: the default counts CPU time alone, from clocks: no
// perf event to open or switch, no /proc table to read at the edges.
func TestSetupDefault(t *testing.T) {
	p, fields := withRequested(t, "on")
	if !p.on || !slices.Equal(p.tallies, []string{"task-clock"}) || len(p.sw)+len(p.hw) > 0 || p.softirqs || p.ipis {
		t.Errorf("on: tallies %v, sw %v, hw %v, softirqs %v, ipis %v; want task-clock alone", p.tallies, p.sw, p.hw, p.softirqs, p.ipis)
	}
	if got := field(fields, "counters"); got != "task-clock" {
		t.Errorf("counters fingerprint %q, want task-clock", got)
	}
	if got := field(fields, "counters.scope"); !strings.HasPrefix(got, "task-clock (CPU time)") {
		t.Errorf("counters.scope %q names more than task-clock's", got)
	}
}

func TestSetupOff(t *testing.T) {
	p, fields := withRequested(t, "off")
	if p.on || !strings.HasPrefix(field(fields, "counters"), "off") {
		t.Errorf("off: on=%v, fields %v", p.on, fields)
	}
}

// TestSetupSkipsWhatTheMachineCannotCount: a counter the machine lacks
// (hardware ones in a VM without a PMU) is skipped with a note; the rest
// are counted.
func TestSetupSkipsWhatTheMachineCannotCount(t *testing.T) {
	p, fields := withRequested(t, "cycles,context-switches,softirqs")
	a := unix.PerfEventAttr{Type: unix.PERF_TYPE_HARDWARE, Config: unix.PERF_COUNT_HW_CPU_CYCLES, Bits: unix.PerfBitDisabled}
	e, err := perfevent.Open("cycles", &a, 0, -1, nil)
	switch {
	case err == nil:
		e.Close()
		if len(p.hw) != 1 {
			t.Errorf("this machine counts cycles, Setup did not: %v", fields)
		}
	case errors.Is(err, perfevent.ErrNotSupported):
		if len(p.hw) != 0 || !strings.Contains(field(fields, "counters.skipped"), "cycles") || field(fields, "counters.pmu") == "" {
			t.Errorf("no PMU, yet fingerprint %v", fields)
		}
	}
	if !strings.Contains(field(fields, "counters"), "softirqs") || !p.softirqs {
		t.Errorf("softirqs not counted: %v", fields)
	}
}

// TestSoftwareCountersCountedWherePossible: where perf_event_open counts
// this process's context switches (in the kernel, where they happen),
// Setup must not have lost them.
func TestSoftwareCountersCountedWherePossible(t *testing.T) {
	a := unix.PerfEventAttr{Type: unix.PERF_TYPE_SOFTWARE, Config: unix.PERF_COUNT_SW_CONTEXT_SWITCHES, Bits: unix.PerfBitDisabled}
	e, err := perfevent.Open("context-switches", &a, 0, -1, nil)
	if err != nil {
		t.Skipf("perf_event_open refuses to count this process's context switches here: %v", err)
	}
	e.Close()
	for _, name := range []string{"task-clock", "context-switches", "cpu-migrations", "page-faults", "softirqs", "ipis"} {
		if !Counted(name) {
			t.Errorf("%s is not counted with KBENCH_COUNTERS=all, yet perf events and /proc work here", name)
		}
	}
}

// TestRegionCountsFaultsAndSwitches: a row whose every op touches a fresh
// page and sleeps reports at least one page fault and one context switch
// per op, and CPU time.
func TestRegionCountsFaultsAndSwitches(t *testing.T) {
	if !Counted("page-faults") || !Counted("context-switches") {
		t.Skip("page faults and context switches are not counted here")
	}
	page := os.Getpagesize()
	res := region.Measure(t, 200, func(b *testing.B) {
		mem, err := unix.Mmap(-1, 0, b.N*page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
		if err != nil {
			b.Fatal(err)
		}
		defer unix.Munmap(mem)
		r := region.Begin(b)
		for i := range b.N {
			mem[i*page] = 1
			unix.Nanosleep(&unix.Timespec{Nsec: 20000}, nil)
		}
		r.End()
	})
	if res.N == 0 {
		t.Fatal("the benchmark failed")
	}
	if f := res.Extra["faults/op"]; f < 1 {
		t.Errorf("%v faults/op, want >= 1 (a fresh page per op)", f)
	}
	if cs := res.Extra["cs/op"]; cs < 1 {
		t.Errorf("%v cs/op, want >= 1 (a sleep per op)", cs)
	}
	if c := res.Extra["cpu-ns/op"]; !(c > 0) {
		t.Errorf("%v cpu-ns/op", c)
	}
	// Each of these is required where it is counted; an unprivileged run
	// skips migrations on purpose (see Setup), and must not fail here.
	for _, c := range []struct{ name, unit string }{
		{"cpu-migrations", "migrations/op"},
		{"softirqs", "softirq-timer/op"},
		{"ipis", "ipi-res/op"},
	} {
		if _, ok := res.Extra[c.unit]; Counted(c.name) && !ok {
			t.Errorf("%s is counted but no %s reported: %v", c.name, c.unit, res.Extra)
		}
	}
}

// TestAcceptsNamesAll keeps KBENCH_COUNTERS' text, a constant for the
// README's table, to the counters there are.
func TestAcceptsNamesAll(t *testing.T) {
	var names []string
	for _, c := range all {
		names = append(names, c.name)
	}
	if want := "on, all, off, or a comma-separated list of " + strings.Join(names, ", "); accepts != want {
		t.Errorf("accepts = %q, want %q", accepts, want)
	}
}
