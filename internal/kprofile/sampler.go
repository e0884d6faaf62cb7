//go:build linux

package kprofile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/google/pprof/profile"
	"github.com/kbench/kbench/internal/cpus"
	"github.com/kbench/kbench/internal/perfevent"
	"github.com/kbench/kbench/internal/procfs"
	"github.com/kbench/kbench/internal/skip"
	"golang.org/x/sys/unix"
)

// ringPages is the data area per CPU: 2 MiB where the user may lock that
// much (root: CAP_IPC_LOCK), else 512 KiB, perf record's default and what
// kernel.perf_event_mlock_kb (516) allows any user per CPU. At 4 kHz,
// system-wide samples of 300-600 bytes fill 512 KiB in a quarter to half
// a second; on a loaded machine the drainer, a goroutine due every
// drainEvery, can be kept off the CPU that long, so the kernel would drop
// samples (PERF_RECORD_LOST, counted in the profile).
const (
	ringPages    = 512
	minRingPages = 128
	drainEvery   = 20 * time.Millisecond
)

// Sampler samples call chains on every CPU while started.
type Sampler struct {
	event string // "cycles" or "cpu-clock"
	hz    int
	scope string // "system-wide" or "process"

	events []*perfevent.Event
	rings  []*ring

	mu      sync.Mutex // guards the collector and the rings' tails
	col     *collector
	procs   map[uint32]*procInfo
	comms   map[uint32]string
	pending [][2]uint32 // pids and tids seen, not yet resolved
	vdso    []byte      // the kernel's vDSO image, as mapped

	running   bool
	stop      chan struct{}
	done      chan struct{}
	startedAt time.Time
	timeNanos int64 // wall clock at the first Start after a reset
	duration  time.Duration
}

type ring struct {
	fd   int
	mem  []byte
	meta *unix.PerfEventMmapPage
	data []byte
	rr   ringReader
}

// Options choose what Open samples.
type Options struct {
	Hz int
	// ProcessOnly samples the calling process and its future children
	// only, even where system-wide sampling is permitted.
	ProcessOnly bool
}

// Open opens a sampling event per online CPU, disabled: system-wide where
// permitted, else for this process and its children (their threads at
// Open, and the threads and processes they start later).
// It prefers the cycles event and falls back to cpu-clock where the
// machine has no PMU. An error wrapping skip.ErrNotSupported means the
// machine refuses kernel sampling to this user.
func Open(o Options) (*Sampler, error) {
	if o.Hz <= 0 {
		return nil, fmt.Errorf("sampling rate %d Hz", o.Hz)
	}
	online, err := cpus.Online()
	if err != nil {
		return nil, err
	}
	s := &Sampler{hz: o.Hz, procs: map[uint32]*procInfo{}, comms: map[uint32]string{}}
	s.col = newCollector(s.seen)
	var wide error // why system-wide sampling failed
	if !o.ProcessOnly {
		if wide = s.openAll(online, nil); wide == nil {
			s.scope = "system-wide"
			return s, nil
		}
	}
	tids, err := procfs.Host.Tasks(os.Getpid())
	if err != nil {
		return nil, err
	}
	if err := s.openAll(online, tids); err != nil {
		if wide != nil {
			// perfevent explained the refusal; the process's error
			// carries that explanation once, the system-wide one its
			// errno.
			return nil, fmt.Errorf("%w; system-wide sampling before it: %s", err, errnoOf(wide))
		}
		return nil, err
	}
	s.scope = "process"
	return s, nil
}

// openAll opens one event per CPU (tids nil: every task) or per thread
// and CPU, choosing the event on the first open, and maps a ring per CPU
// that the CPU's other events write to. (The kernel refuses to map an
// inherited event opened for any CPU, so a process is sampled per thread
// and CPU, as perf record -p does.)
func (s *Sampler) openAll(online []int, tids []int) error {
	pids := []int{-1}
	what := "system-wide kernel sampling"
	if tids != nil {
		pids = tids
		what = "kernel sampling of this process (per thread, inherited)"
	}
	for _, cpu := range online {
		var owner *ring
		for _, pid := range pids {
			ev, err := s.open(pid, cpu, tids != nil)
			if errors.Is(err, unix.ESRCH) && tids != nil {
				continue // the thread exited meanwhile
			}
			if err != nil {
				s.closeEvents()
				return fmt.Errorf("%s: %w", what, err)
			}
			s.events = append(s.events, ev)
			if owner == nil {
				r, err := mapRing(ev.FD())
				if err != nil {
					s.closeEvents()
					return fmt.Errorf("%s: mmap of the ring for CPU %d: %w", what, cpu, err)
				}
				owner = r
				s.rings = append(s.rings, r)
				continue
			}
			if err := unix.IoctlSetInt(ev.FD(), unix.PERF_EVENT_IOC_SET_OUTPUT, owner.fd); err != nil {
				s.closeEvents()
				return fmt.Errorf("%s: redirecting thread %d's CPU %d samples: %w", what, pid, cpu, err)
			}
		}
	}
	return nil
}

// openEvent is perfevent.Open; tests play its failures.
var openEvent = perfevent.Open

// errnoOf names the errno err wraps, or is err's text.
func errnoOf(err error) string {
	var errno unix.Errno
	if errors.As(err, &errno) {
		return skip.Errno(errno)
	}
	return err.Error()
}

// open opens the sampling event, trying cycles first.
func (s *Sampler) open(pid, cpu int, inherit bool) (*perfevent.Event, error) {
	if s.event == "" || s.event == "cycles" {
		ev, err := openEvent("cycles", samplingAttr(unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_CPU_CYCLES, s.hz, inherit), pid, cpu, nil)
		if err == nil {
			s.event = "cycles"
			return ev, nil
		}
		// A refusal is no missing PMU: cpu-clock would be refused too.
		if s.event == "cycles" || !errors.Is(err, perfevent.ErrNotSupported) || errors.Is(err, fs.ErrPermission) {
			return nil, err
		}
	}
	ev, err := openEvent("cpu-clock", samplingAttr(unix.PERF_TYPE_SOFTWARE, unix.PERF_COUNT_SW_CPU_CLOCK, s.hz, inherit), pid, cpu, nil)
	if err == nil {
		s.event = "cpu-clock"
	}
	return ev, err
}

func mapRing(fd int) (*ring, error) {
	page := os.Getpagesize()
	pages := ringPages
	mem, err := unix.Mmap(fd, 0, (1+pages)*page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if errors.Is(err, unix.EPERM) || errors.Is(err, unix.ENOMEM) {
		pages = minRingPages
		mem, err = unix.Mmap(fd, 0, (1+pages)*page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	}
	if err != nil {
		return nil, err
	}
	meta := (*unix.PerfEventMmapPage)(unsafe.Pointer(&mem[0]))
	off, size := meta.Data_offset, meta.Data_size
	if off == 0 { // kernels before 4.1 leave these zero
		off, size = uint64(page), uint64(pages*page)
	}
	return &ring{fd: fd, mem: mem, meta: meta, data: mem[off : off+size]}, nil
}

// Event names the sampling event: "cycles" or "cpu-clock".
func (s *Sampler) Event() string { return s.event }

// Scope is "system-wide" or "process".
func (s *Sampler) Scope() string { return s.scope }

// Start enables sampling and the drainer.
func (s *Sampler) Start() error {
	if s.running {
		return nil
	}
	s.stop, s.done = make(chan struct{}), make(chan struct{})
	go s.drainer(s.stop, s.done)
	if s.timeNanos == 0 {
		s.timeNanos = time.Now().UnixNano()
	}
	s.startedAt = time.Now()
	for _, ev := range s.events {
		if err := ev.Enable(false); err != nil {
			s.disable()
			close(s.stop)
			<-s.done
			return err
		}
	}
	s.running = true
	return nil
}

// Stop disables sampling and the drainer, reads what is left in the
// rings, and reads the maps and names of the tasks the samples name
// (the benchmark timer has stopped by then).
func (s *Sampler) Stop() error {
	if !s.running {
		return nil
	}
	err := s.disable()
	s.duration += time.Since(s.startedAt)
	s.running = false
	close(s.stop)
	<-s.done
	s.drain()
	s.resolve()
	return err
}

func (s *Sampler) disable() error {
	var first error
	for _, ev := range s.events {
		if err := ev.Disable(false); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Reset discards the samples taken so far; call it while stopped.
func (s *Sampler) Reset() {
	s.drain()
	s.mu.Lock()
	s.col = newCollector(s.seen)
	s.mu.Unlock()
	s.timeNanos, s.duration = 0, 0
}

func (s *Sampler) drainer(stop, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(drainEvery)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			s.drain()
		}
	}
}

// drain reads every ring up to its head. data_head is read with an
// atomic load (the kernel's smp_store_release pairs with it), and
// data_tail is published with an atomic store after the records are
// consumed, so the kernel never overwrites a record being read.
func (s *Sampler) drain() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.rings {
		head := atomic.LoadUint64(&r.meta.Data_head)
		tail := atomic.LoadUint64(&r.meta.Data_tail)
		next, err := r.rr.read(r.data, tail, head, s.col.record)
		if err != nil {
			s.col.note(err.Error())
			next = head // nothing after a bad record can be framed
		}
		atomic.StoreUint64(&r.meta.Data_tail, next)
	}
}

// seen notes a new pid and tid. It runs in the drainer, which opens no
// file while the region runs: benchmarks count their fds (sockfdbench),
// and an fd the drainer held, even for a moment, would read as a leak.
// resolve reads them when the region stops. It runs with s.mu held.
func (s *Sampler) seen(pid, tid uint32) {
	s.pending = append(s.pending, [2]uint32{pid, tid})
}

// resolve reads the maps and names of the pids and tids seen since the
// last call, while they live; a task that exited before the region
// stopped keeps its addresses and "pid N" as its name.
func (s *Sampler) resolve() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, pt := range s.pending {
		pid, tid := pt[0], pt[1]
		if _, ok := s.procs[pid]; !ok {
			pi := &procInfo{}
			if pid != 0 {
				pi.maps, pi.err = execMaps(procfs.Host.Maps(int(pid)))
			}
			s.procs[pid] = pi
			for _, m := range pi.maps {
				if m.Path == "[vdso]" && s.vdso == nil {
					s.vdso, _ = procfs.Host.ReadMem(int(pid), m)
				}
			}
		}
		if _, ok := s.comms[tid]; !ok && tid != 0 {
			if comm, err := procfs.Host.TaskComm(int(pid), int(tid)); err == nil {
				s.comms[tid] = comm
			}
		}
	}
	s.pending = s.pending[:0]
}

// Samples is the number of samples taken since the last reset, and the
// first and last sample times (CLOCK_MONOTONIC ns).
func (s *Sampler) Samples() (n, first, last uint64) {
	s.drain()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.col.samples, s.col.first, s.col.last
}

// Lost is the number of samples taken and dropped by the kernel since the
// last reset.
func (s *Sampler) Lost() (n, lost uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.col.samples, s.col.lost
}

// Profile builds the pprof profile of the samples since the last reset;
// call it while stopped. Kernel frames are named from /proc/kallsyms as
// it reads now, so BPF programs still loaded are named.
func (s *Sampler) Profile() (*profile.Profile, error) {
	s.drain()
	s.resolve()
	s.mu.Lock()
	defer s.mu.Unlock()
	m := meta{event: s.event, hz: s.hz, scope: s.scope, timeNanos: s.timeNanos, duration: int64(s.duration)}
	if s.col.lost > 0 {
		m.notes = append(m.notes, fmt.Sprintf("the kernel dropped %d samples: the drainer fell behind", s.col.lost))
	}
	var p *profile.Profile
	for fresh := false; ; fresh = true {
		kall, note, reread := kallsyms(fresh)
		mm := m
		if note != "" {
			mm.notes = append(slices.Clip(m.notes), note)
		}
		sym := &symbolizer{kall: kall, procs: s.procs, comms: s.comms, self: uint32(os.Getpid()), open: s.openFile}
		p = build(s.col, sym, mm)
		// Code loaded since the symbols were read (a module, an eBPF
		// program) is named by reading them again.
		if sym.missedAboveCore == 0 || reread {
			break
		}
	}
	if err := p.CheckValid(); err != nil {
		return nil, fmt.Errorf("built an invalid profile: %v", err)
	}
	return p, nil
}

// symbols caches the kernel's symbols between profiles: reading and
// parsing /proc/kallsyms takes about 150 ms here, once per run of a row.
var symbols struct {
	sync.Mutex
	k    *Kallsyms
	note string
	read bool
}

// kallsyms returns the cached symbols, reading them if fresh or never
// read; reread says whether this call read them.
func kallsyms(fresh bool) (k *Kallsyms, note string, reread bool) {
	symbols.Lock()
	defer symbols.Unlock()
	if fresh || !symbols.read {
		symbols.k, symbols.note = loadKallsyms()
		symbols.read, reread = true, true
	}
	return symbols.k, symbols.note, reread
}

// loadKallsyms reads the kernel's symbols, with a note where they cannot
// name kernel frames.
func loadKallsyms() (*Kallsyms, string) {
	mods, err := procfs.Host.Modules()
	var bad *procfs.SyntaxError
	if errors.As(err, &bad) {
		return nil, fmt.Sprintf("kernel frames unnamed: %v", err)
	}
	// Without /proc/modules (no CONFIG_MODULES), no module extents.
	k, err := buildKallsyms(procfs.Host.Kallsyms, mods)
	if err != nil {
		return nil, fmt.Sprintf("kernel frames unnamed: %v", err)
	}
	if k.Zeroed {
		kptr, err := procfs.Host.Sysctl("kernel.kptr_restrict")
		if err != nil {
			kptr = "unreadable"
		}
		return k, fmt.Sprintf("kernel frames unnamed: /proc/kallsyms shows every address as 0 to this user (kernel.kptr_restrict is %s); run as root", kptr)
	}
	return k, ""
}

// openFile gives the symbolizer a file opened while its process lived:
// the vDSO's image read from its memory, the mapped file through /proc,
// else the path as named.
func (s *Sampler) openFile(pid uint32, m mapping) (io.ReaderAt, error) {
	if m.Path == "[vdso]" {
		if s.vdso == nil {
			return nil, errors.New("vDSO image not read")
		}
		return bytes.NewReader(s.vdso), nil
	}
	if f, err := procfs.Host.OpenMapped(int(pid), m); err == nil {
		return f, nil
	}
	return os.Open(m.Path)
}

// Close disables sampling and releases the events, rings and files.
func (s *Sampler) Close() error {
	if s.running {
		s.Stop()
	}
	s.closeEvents()
	return nil
}

func (s *Sampler) closeEvents() {
	for _, r := range s.rings {
		unix.Munmap(r.mem)
	}
	s.rings = nil
	for _, ev := range s.events {
		ev.Close()
	}
	s.events = nil
}
