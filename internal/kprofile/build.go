//go:build linux

package kprofile

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strconv"

	"github.com/google/pprof/profile"
)

// procInfo is what was read of a process while it lived.
type procInfo struct {
	maps []mapping
	err  error // why maps is empty
}

// fileOpener opens a mapped file of pid for reading its symbols.
type fileOpener func(pid uint32, m mapping) (io.ReaderAt, error)

// meta describes how samples were taken, for the profile's header.
type meta struct {
	event     string // "cpu-clock" or "cycles"
	hz        int
	scope     string // "system-wide" or "process"
	timeNanos int64  // wall clock at the first enable
	duration  int64  // ns the events were enabled, all windows together
	notes     []string
}

// symbolizer turns addresses into pprof locations.
type symbolizer struct {
	kall  *Kallsyms // nil: not readable
	procs map[uint32]*procInfo
	comms map[uint32]string // by tid
	self  uint32            // the test process: symbolized by the Go runtime
	open  fileOpener        // nil: open the path as named
	elfs  map[string]*elfSyms

	p         *profile.Profile
	locs      map[locKey]*profile.Location
	funcs     map[funcKey]*profile.Function
	maps      map[mapKey]*profile.Mapping
	kernelMap *profile.Mapping
	// missedAboveCore counts kernel locations above the core kernel's
	// text that no symbol names.
	missedAboveCore int
}

type locKey struct {
	pid    uint32 // ^0 for the kernel
	addr   uint64
	leaf   bool
	caller string // for kernel code without a symbol: who called it
}

type funcKey struct{ name, file string }

type mapKey struct {
	pid   uint32
	start uint64
}

const kernelPid = ^uint32(0)

// build makes the pprof profile of c's samples.
func build(c *collector, sym *symbolizer, m meta) *profile.Profile {
	p := &profile.Profile{
		TimeNanos:     m.timeNanos,
		DurationNanos: m.duration,
	}
	if m.event == "cpu-clock" {
		p.SampleType = []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}}
		p.DefaultSampleType = "cpu"
		p.PeriodType = &profile.ValueType{Type: "cpu", Unit: "nanoseconds"}
		p.Period = int64(1e9 / m.hz)
	} else {
		p.SampleType = []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: m.event, Unit: "count"}}
		p.DefaultSampleType = m.event
		p.PeriodType = &profile.ValueType{Type: m.event, Unit: "count"}
	}
	p.Comments = append(p.Comments,
		Sampling{m.event, m.hz, m.scope}.Header(),
		c.summary())
	p.Comments = append(p.Comments, m.notes...)
	for _, b := range c.bad {
		p.Comments = append(p.Comments, "bad record: "+b)
	}
	sym.p = p
	sym.locs = map[locKey]*profile.Location{}
	sym.funcs = map[funcKey]*profile.Function{}
	sym.maps = map[mapKey]*profile.Mapping{}
	if sym.elfs == nil {
		sym.elfs = map[string]*elfSyms{}
	}

	aggs := c.stacks()
	// A stable order makes two builds of one profile byte-identical.
	sort.Slice(aggs, func(i, j int) bool {
		a, b := aggs[i], aggs[j]
		if a.count != b.count {
			return a.count > b.count
		}
		if a.pid != b.pid {
			return a.pid < b.pid
		}
		if a.tid != b.tid {
			return a.tid < b.tid
		}
		if a.cpu != b.cpu {
			return a.cpu < b.cpu
		}
		return a.key < b.key
	})
	for _, a := range aggs {
		s := &profile.Sample{
			Value: []int64{int64(a.count), int64(a.period)},
			// pid and cpu are names, not measures: string labels, which
			// also keep a 0 that a unitless numeric label would lose.
			Label: map[string][]string{
				"comm": {sym.comm(a.pid, a.tid)}, "mode": {modeName(a.mode)},
				"pid": {strconv.FormatUint(uint64(a.pid), 10)}, "cpu": {strconv.FormatUint(uint64(a.cpu), 10)},
			},
		}
		for i, f := range a.frames {
			s.Location = append(s.Location, sym.location(a.pid, f, i == 0, a.frames[i+1:]))
		}
		p.Sample = append(p.Sample, s)
	}
	return p
}

func modeName(mode uint16) string {
	switch mode {
	case miscKernel:
		return "kernel"
	case miscUser:
		return "user"
	}
	return "other"
}

func (s *symbolizer) comm(pid, tid uint32) string {
	if c, ok := s.comms[tid]; ok {
		return c
	}
	if c, ok := s.comms[pid]; ok {
		return c
	}
	if pid == 0 {
		return "swapper"
	}
	return fmt.Sprintf("pid %d", pid)
}

func (s *symbolizer) function(name, file string) *profile.Function {
	k := funcKey{name, file}
	if f := s.funcs[k]; f != nil {
		return f
	}
	f := &profile.Function{ID: uint64(len(s.p.Function) + 1), Name: name, SystemName: name, Filename: file}
	s.p.Function = append(s.p.Function, f)
	s.funcs[k] = f
	return f
}

func (s *symbolizer) mapping(pid uint32, m mapping, ok bool) *profile.Mapping {
	k := mapKey{pid, m.Start}
	if !ok {
		k.start = 0
	}
	if pm := s.maps[k]; pm != nil {
		return pm
	}
	pm := &profile.Mapping{
		ID: uint64(len(s.p.Mapping) + 1), Start: m.Start, Limit: m.End, Offset: m.Offset,
		File: m.Path, HasFunctions: true,
	}
	if !ok {
		pm.File = "[unknown]"
	}
	s.p.Mapping = append(s.p.Mapping, pm)
	s.maps[k] = pm
	return pm
}

// location resolves one frame; callers are the frames above it.
func (s *symbolizer) location(pid uint32, f frame, leaf bool, callers []frame) *profile.Location {
	k := locKey{pid: pid, addr: f.addr, leaf: leaf}
	// A return address points after its call; look up the call itself.
	look := f.addr
	if !leaf && look > 0 {
		look--
	}
	var ksym string
	if f.kernel {
		k.pid = kernelPid
		var ok bool
		if ksym, ok = s.kernelName(look); !ok {
			k.caller = s.kernelCaller(callers)
		}
	}
	if l := s.locs[k]; l != nil {
		return l
	}
	l := &profile.Location{ID: uint64(len(s.p.Location) + 1), Address: f.addr}
	if f.kernel {
		if s.kernelMap == nil {
			s.kernelMap = &profile.Mapping{ID: uint64(len(s.p.Mapping) + 1), File: KernelMapping, Start: 0, Limit: ^uint64(0), HasFunctions: true}
			s.p.Mapping = append(s.p.Mapping, s.kernelMap)
		}
		l.Mapping = s.kernelMap
		if ksym == "" {
			ksym = s.unnamedKernel(look, k.caller)
		}
		l.Line = []profile.Line{{Function: s.function(ksym, KernelMapping)}}
	} else {
		s.userLines(l, pid, look)
	}
	s.p.Location = append(s.p.Location, l)
	s.locs[k] = l
	return l
}

// unnamedKernel names kernel text no kallsyms symbol covers.
const (
	unnamedKernel = "[no kallsyms symbol]"
	unnamedJIT    = "[JIT'd BPF, no kallsyms symbol]"
)

// unnamedKernel names code kallsyms does not list. Above the core
// kernel's text, kallsyms lists every module symbol, ftrace and kprobe
// trampoline and eBPF program, but never a classic BPF program the kernel
// JIT'd (seccomp filters, socket filters): code there without a symbol
// is that. The unwinder stops at JIT'd code, so it rarely has a caller;
// where it has, the name says which.
func (s *symbolizer) unnamedKernel(addr uint64, caller string) string {
	name := unnamedKernel
	if s.kall != nil && !s.kall.Zeroed && s.kall.AboveCore(addr) {
		name = unnamedJIT
		s.missedAboveCore++
	}
	if caller != "" {
		name += " called by " + caller
	}
	return name
}

// kernelName names a kernel address ("func" or "func [module]").
func (s *symbolizer) kernelName(addr uint64) (string, bool) {
	if s.kall == nil {
		return "", false
	}
	sym, ok := s.kall.Lookup(addr)
	return sym.Name, ok
}

// kernelCaller names the nearest named kernel frame among callers.
func (s *symbolizer) kernelCaller(callers []frame) string {
	for _, c := range callers {
		if !c.kernel {
			break
		}
		if name, ok := s.kernelName(c.addr - 1); ok {
			return name
		}
	}
	return ""
}

// userLines fills l for a user address of pid.
func (s *symbolizer) userLines(l *profile.Location, pid uint32, addr uint64) {
	var maps []mapping
	if pi := s.procs[pid]; pi != nil {
		maps = pi.maps
	}
	m, ok := findMapping(maps, addr)
	l.Mapping = s.mapping(pid, m, ok)
	if pid == s.self {
		if lines := goLines(s, addr); lines != nil {
			l.Line = lines
			return
		}
	}
	if ok && m.Path != "" && (m.Path[0] != '[' || m.Path == "[vdso]") {
		e := s.elfs[m.Path]
		if e == nil {
			e = s.readELF(pid, m)
			s.elfs[m.Path] = e
		}
		if name, file, line, found := e.lookup(addr - m.Start + m.Offset); found {
			if file == "" {
				file = m.Path
			}
			l.Line = []profile.Line{{Function: s.function(name, file), Line: int64(line)}}
			return
		}
	}
	file := ""
	if ok {
		file = m.Path
	}
	l.Line = []profile.Line{{Function: s.function(unknownName(m, ok, addr), file)}}
}

func (s *symbolizer) readELF(pid uint32, m mapping) *elfSyms {
	open := s.open
	if open == nil {
		open = func(_ uint32, m mapping) (io.ReaderAt, error) { return os.Open(m.Path) }
	}
	r, err := open(pid, m)
	if err != nil {
		return &elfSyms{err: err}
	}
	if c, ok := r.(io.Closer); ok {
		defer c.Close()
	}
	return readELF(r, m.Path)
}

// goLines symbolizes an address of this process with the Go runtime,
// inlined calls included; nil where it is not Go code.
func goLines(s *symbolizer, addr uint64) []profile.Line {
	// CallersFrames takes return addresses: give it addr+1 so it looks
	// up addr itself.
	frames := runtime.CallersFrames([]uintptr{uintptr(addr + 1)})
	var lines []profile.Line
	for {
		fr, more := frames.Next()
		if fr.Function == "" {
			break
		}
		lines = append(lines, profile.Line{Function: s.function(fr.Function, fr.File), Line: int64(fr.Line)})
		if !more {
			break
		}
	}
	return lines
}
