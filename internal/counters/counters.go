//go:build linux

package counters

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/kbench/kbench/internal/cpus"
	"github.com/kbench/kbench/internal/fingerprint"
	"github.com/kbench/kbench/internal/options"
	"github.com/kbench/kbench/internal/perfevent"
	"github.com/kbench/kbench/internal/procfs"
	"github.com/kbench/kbench/internal/region"
	"github.com/kbench/kbench/internal/skip"
	"github.com/kbench/kbench/internal/unit"
)

var requested = options.String("KBENCH_COUNTERS", accepts, "on", validate,
	"every test binary: the kernel counters each row reports per op: `on`, CPU time (`cpu-ns/op`), the counter kbcompare's evidence on real kernel A/Bs rests on; `all`, every counter (switches, migrations, faults, PMU events, each softirq vector, IPIs); a list, those (`go doc ./internal/counters`). One the machine cannot count is skipped with a note in the fingerprint")

// accepts is what KBENCH_COUNTERS accepts, every counter by name; a
// constant, which docs/running.md's table is made from (TestAcceptsNamesAll
// keeps it to the list of counters).
const accepts = "on, all, off, or a comma-separated list of task-clock, context-switches, cpu-migrations, page-faults, cycles, instructions, branch-misses, cache-misses, iTLB-load-misses, softirqs, ipis"

// validate accepts on, all, off or a list of known counter names.
func validate(s string) error {
	if s == "on" || s == "all" || s == "off" {
		return nil
	}
	_, err := parseList(s)
	return err
}

func parseList(s string) ([]counter, error) {
	var out []counter
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		c, ok := lookup(f)
		if !ok {
			return nil, fmt.Errorf("%q is not a counter", f)
		}
		if slices.ContainsFunc(out, func(o counter) bool { return o.name == c.name }) {
			return nil, fmt.Errorf("%q is listed twice", f)
		}
		out = append(out, c)
	}
	return out, nil
}

// selection is the counters a value of KBENCH_COUNTERS asks for.
func selection(s string) ([]counter, error) {
	switch s {
	case "off":
		return nil, nil
	case "on", "":
		return parseList("task-clock") // the default: CPU time alone (doc.go says why)
	case "all":
		return all, nil
	}
	return parseList(s)
}

// prov is the provider registered with region.
var prov = &provider{}

func init() { region.Register(prov) }

// Counted reports whether this test binary's rows report counter name
// (KBENCH_COUNTERS asked for it and the machine counts it); false before
// benchmain's setup ran.
func Counted(name string) bool {
	c, ok := lookup(name)
	if !ok || !prov.on {
		return false
	}
	if slices.Contains(prov.tallies, name) {
		return true
	}
	switch c.kind {
	case procFile:
		return (name == "softirqs" && prov.softirqs) || (name == "ipis" && prov.ipis)
	}
	return slices.ContainsFunc(append(slices.Clone(prov.sw), prov.hw...), func(o counter) bool { return o.name == name })
}

// provider opens the counters for every row; Setup decides, once per
// binary, which of the requested counters this machine counts and where.
type provider struct {
	scope    perfevent.Scope
	tallies  []string // counters read as running totals (cputime.go)
	sw, hw   []counter
	softirqs bool
	ipis     bool
	userOnly bool // kernel.perf_event_paranoid refused counting the kernel
	on       bool
}

func (p *provider) Name() string { return "counters" }

func (p *provider) Setup() ([]fingerprint.Field, error) {
	sel, err := selection(*requested)
	if err != nil {
		return nil, fmt.Errorf("KBENCH_COUNTERS=%q: %v", *requested, err)
	}
	*p = provider{}
	if len(sel) == 0 {
		return []fingerprint.Field{{Key: "counters", Value: "off (KBENCH_COUNTERS=off)"}}, nil
	}
	p.scope = perfevent.Process
	scopeNote := ""
	if err := perfevent.CanSystemWide(); err == nil {
		p.scope = perfevent.SystemWide
	} else {
		scopeNote = fmt.Sprintf(" (system-wide refused: %s)", reason(err))
	}
	var skipped skips
	var unknown []string
	for _, c := range sel {
		switch c.kind {
		case procFile:
			pc, err := readProc(c.name)
			if err != nil {
				skipped.add(c.name, err.Error())
				continue
			}
			for _, l := range pc {
				if _, ok := unit.Units[l.unit]; !ok {
					unknown = append(unknown, l.unit)
				}
			}
			if c.name == "softirqs" {
				p.softirqs = true
			} else {
				p.ipis = true
			}
			continue
		}
		if t := newTally(c.name, p.scope); t != nil {
			if err := t.start(); err != nil {
				skipped.add(c.name, err.Error())
				continue
			}
			p.tallies = append(p.tallies, c.name)
			continue
		}
		if c.kind == software && p.scope == perfevent.Process {
			skipped.add(c.name, "a per-task perf event is switched out and in with its task at every context switch, which costs more than 1% of a row (system-wide counting, as root or with CAP_PERFMON, does not)")
			continue
		}
		if err := p.probe(c, p.scope); err != nil {
			skipped.add(c.name, reason(err))
			continue
		}
		switch c.kind {
		case software:
			p.sw = append(p.sw, c)
		case hardware:
			p.hw = append(p.hw, c)
		}
	}
	p.on = len(p.tallies) > 0 || len(p.sw) > 0 || len(p.hw) > 0 || p.softirqs || p.ipis
	var counted []string
	for _, c := range sel {
		if !skipped.has(c.name) {
			counted = append(counted, c.name)
		}
	}
	fields := []fingerprint.Field{
		{Key: "counters", Value: strings.Join(counted, ",")},
		{Key: "counters.scope", Value: p.scopeLine() + scopeNote},
	}
	if len(skipped) > 0 {
		fields = append(fields, fingerprint.Field{Key: "counters.skipped", Value: skipped.String()})
	}
	if len(unknown) > 0 {
		fields = append(fields, fingerprint.Field{Key: "counters.unknown", Value: strings.Join(unknown, ", ") + " (lines this kbench does not know, not reported; add them to unit.Units)"})
	}
	if !slices.ContainsFunc(sel, func(c counter) bool { return c.kind == hardware }) {
		return fields, nil
	}
	if len(p.hw) == 0 {
		fields = append(fields, fingerprint.Field{Key: "counters.pmu", Value: "none: no hardware counters (no PMU, or a VM without a virtual PMU); rows lack them"})
	}
	return fields, nil
}

func (p *provider) scopeLine() string {
	const cpu = "task-clock (CPU time): the test process and its children"
	if slices.Equal(p.tallies, []string{"task-clock"}) && len(p.sw)+len(p.hw) == 0 && !p.softirqs && !p.ipis {
		return cpu
	}
	user := ""
	if p.userOnly {
		user = " (PMU events: user space only, kernel.perf_event_paranoid)"
	}
	if p.scope == perfevent.SystemWide {
		return "system-wide on every online CPU, as perf stat -a (context switches: /proc/stat ctxt; page faults: /proc/vmstat pgfault; migrations and PMU events: perf)" + user +
			"; " + cpu
	}
	return "the test process and its children (task-clock, context switches, page faults: clocks, getrusage and the children's /proc files; PMU events: perf, per task)" + user
}

// skips groups the skipped counters by the reason they were skipped.
type skips []struct {
	why   string
	names []string
}

func (s *skips) add(name, why string) {
	for i := range *s {
		if (*s)[i].why == why {
			(*s)[i].names = append((*s)[i].names, name)
			return
		}
	}
	*s = append(*s, struct {
		why   string
		names []string
	}{why, []string{name}})
}

func (s skips) has(name string) bool {
	for _, g := range s {
		if slices.Contains(g.names, name) {
			return true
		}
	}
	return false
}

// String is "a,b: why; c: why".
func (s skips) String() string {
	var parts []string
	for _, g := range s {
		parts = append(parts, strings.Join(g.names, ",")+": "+g.why)
	}
	return strings.Join(parts, "; ")
}

// reason says why a probe failed, without the event's name, so that
// events skipped for one cause share one note.
func reason(err error) string {
	var u *skip.Unsupported
	if errors.As(err, &u) {
		return fmt.Sprintf("perf_event_open: %s, %s", skip.Errno(u.Err), u.Hint)
	}
	var errno unix.Errno
	if errors.As(err, &errno) {
		return "perf_event_open: " + skip.Errno(errno)
	}
	return err.Error()
}

// probe opens c once in scope and closes it; in process scope, a refusal
// to count the kernel is retried for user space only.
func (p *provider) probe(c counter, scope perfevent.Scope) error {
	a := c.attr()
	a.Bits = unix.PerfBitDisabled | p.userBits()
	pid, cpu := 0, -1
	if scope == perfevent.SystemWide {
		online, err := cpus.Online()
		if err != nil {
			return err
		}
		pid, cpu = -1, online[0]
	}
	e, err := perfevent.Open(c.name, &a, pid, cpu, nil)
	if errors.Is(err, os.ErrPermission) && scope == perfevent.Process && !p.userOnly {
		p.userOnly = true
		return p.probe(c, scope)
	}
	if err != nil {
		return err
	}
	return e.Close()
}

func (p *provider) userBits() uint64 {
	if p.userOnly {
		return unix.PerfBitExcludeKernel | unix.PerfBitExcludeHv
	}
	return 0
}

func (p *provider) specs(cs []counter) []perfevent.Spec {
	out := make([]perfevent.Spec, len(cs))
	for i, c := range cs {
		out[i] = perfevent.Spec{Name: c.name, Attr: c.attr()}
		out[i].Attr.Bits |= p.userBits()
	}
	return out
}

func (p *provider) Open(b *testing.B) (region.Instrument, error) {
	if !p.on {
		return nil, nil
	}
	in := &instrument{p: p}
	open := func(cs []counter, scope perfevent.Scope) error {
		if len(cs) == 0 {
			return nil
		}
		s, err := perfevent.OpenSet(p.specs(cs), scope, os.Getpid(), true)
		if err != nil {
			return err
		}
		in.sets = append(in.sets, countedSet{s, cs})
		return nil
	}
	for _, name := range p.tallies {
		t := newTally(name, p.scope)
		if name == "task-clock" {
			in.cpu = t
		} else {
			in.tallies = append(in.tallies, t)
		}
	}
	if err := errors.Join(open(p.sw, p.scope), open(p.hw, p.scope)); err != nil {
		in.Close()
		return nil, err
	}
	if p.softirqs {
		in.procs = append(in.procs, &procDelta{name: "softirqs"})
	}
	if p.ipis {
		in.procs = append(in.procs, &procDelta{name: "ipis"})
	}
	return in, nil
}

// countedSet is a perf event set and the counters it holds, in order.
type countedSet struct {
	set *perfevent.Set
	cs  []counter
}

// instrument is the counters of one run of a row.
type instrument struct {
	p       *provider
	cpu     *tally   // task-clock; nil unless counted
	tallies []*tally // other running totals
	sets    []countedSet
	procs   []*procDelta
}

// Start reads the /proc tables and totals, then enables the events, then
// reads the CPU clocks; Stop does the reverse, so that one's own work
// lands in the others as little as can be.
func (in *instrument) Start() error {
	for _, d := range in.procs {
		if err := d.start(); err != nil {
			return err
		}
	}
	for _, t := range in.tallies {
		if err := t.start(); err != nil {
			return err
		}
	}
	var errs []error
	for _, s := range in.sets {
		errs = append(errs, s.set.Enable())
	}
	if in.cpu != nil {
		errs = append(errs, in.cpu.start())
	}
	return errors.Join(errs...)
}

func (in *instrument) Stop() error {
	var errs []error
	if in.cpu != nil {
		errs = append(errs, in.cpu.stop())
	}
	for _, s := range slices.Backward(in.sets) {
		errs = append(errs, s.set.Disable())
	}
	for _, t := range slices.Backward(in.tallies) {
		errs = append(errs, t.stop())
	}
	for _, d := range slices.Backward(in.procs) {
		errs = append(errs, d.stop())
	}
	return errors.Join(errs...)
}

func (in *instrument) Reset() error {
	var errs []error
	for _, s := range in.sets {
		errs = append(errs, s.set.Reset())
	}
	for _, d := range in.procs {
		d.sum = nil
	}
	for _, t := range append([]*tally{in.cpu}, in.tallies...) {
		if t != nil {
			t.sum = 0
		}
	}
	return errors.Join(errs...)
}

func (in *instrument) Report(ops int64, r region.Reporter) {
	for _, t := range append([]*tally{in.cpu}, in.tallies...) {
		if t != nil {
			r.Metric(float64(t.sum)/float64(ops), t.unit)
		}
	}
	for _, s := range in.sets {
		totals, err := s.set.Read()
		if err != nil {
			r.Log(err)
			continue
		}
		for i, t := range totals {
			c := s.cs[i]
			if t.NotCounted {
				r.Log(c.name, "was enabled but never counted (its PMU was busy the whole run); left out")
				continue
			}
			if t.Multiplexed {
				r.Log(c.name, "was multiplexed; its value is scaled by time enabled/time running")
			}
			r.Metric(t.Scaled/float64(ops), c.unit)
		}
	}
	for _, d := range in.procs {
		for _, pc := range d.sum {
			if _, ok := unit.Units[pc.unit]; !ok {
				continue // named in the fingerprint's counters.unknown
			}
			r.Metric(float64(pc.total)/float64(ops), pc.unit)
		}
	}
}

func (in *instrument) Close() error {
	var errs []error
	for _, s := range in.sets {
		errs = append(errs, s.set.Close())
	}
	in.sets = nil
	return errors.Join(errs...)
}

// procDelta sums the deltas of a /proc table over the started phases.
type procDelta struct {
	name   string
	before []procCount
	sum    []procCount
}

func (d *procDelta) start() error {
	var err error
	d.before, err = readProc(d.name)
	return err
}

func (d *procDelta) stop() error {
	after, err := readProc(d.name)
	if err != nil {
		return err
	}
	dl, err := delta(d.before, after)
	if err != nil {
		return fmt.Errorf("%s changed during the run: %v", d.name, err)
	}
	if d.sum == nil {
		d.sum = dl
		return nil
	}
	for i := range dl {
		d.sum[i].total += dl[i].total
	}
	return nil
}

// readProc reads the softirq lines of /proc/softirqs or the IPI lines
// of /proc/interrupts.
func readProc(name string) ([]procCount, error) {
	file, counts := "softirqs", softirqCounts
	if name == "ipis" {
		file, counts = "interrupts", ipiCounts
	}
	lines, err := procfs.Host.CPUTable(file)
	if err != nil {
		return nil, err
	}
	pc := counts(lines)
	if len(pc) == 0 {
		return nil, fmt.Errorf("%s has no lines to count", procfs.Host.Path(file))
	}
	return pc, nil
}

// All counts every counter this machine counts until tb ends, for the
// tests that check what the event counters see in a row (the default
// counts CPU time alone).
func All(tb testing.TB) {
	tb.Helper()
	saved, savedReq := *prov, *requested
	*requested = "all"
	tb.Cleanup(func() { *prov, *requested = saved, savedReq })
	if _, err := prov.Setup(); err != nil {
		tb.Fatal(err)
	}
}
