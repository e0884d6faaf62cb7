//go:build linux

package netbench

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/kbench/kbench/internal/child"
	"github.com/kbench/kbench/internal/skip"
	"github.com/kbench/kbench/internal/thread"
	"github.com/kbench/kbench/internal/unit"
	"golang.org/x/sys/unix"
)

// SlowAfter is the latency above which a transaction counts as slow
// (slow/op): on a fast machine a SYN retransmit (1 s) after a TIME_WAIT
// collision or a full backlog, not scheduling noise. It is evidence, not a
// check: a slow kernel or an emulated machine is slow everywhere, and what
// fails a run is the kernel's own count of retransmitted SYNs (checkRetrans).
const SlowAfter = 200 * time.Millisecond

// Config is one benchmark row.
type Config struct {
	Kind     Kind
	Flows    int
	Req, Rsp int  // request and response sizes in bytes
	Shared   bool // mm=shared: flows are threads, not processes
}

// Result is what one run measured.
type Result struct {
	Txns int64   // transactions completed and checked by the clients
	Lat  []int64 // every transaction's latency in ns, sorted
	Slow int64   // transactions slower than SlowAfter
	// SynRetrans is the network namespace's TCPSynRetrans over the run:
	// SYNs the clients' kernel sent again.
	SynRetrans int64
	Skips      int64   // local ports refused and walked past
	Client     []int64 // per flow: the client's count
	Ports      []int   // per flow: the server's data port
	Server     []flowReport
}

// Percentile returns the p-th percentile latency (nearest rank).
func (r *Result) Percentile(p float64) time.Duration {
	return time.Duration(unit.Percentile(r.Lat, p))
}

// timer is the part of *testing.B a run drives: the clock runs only while
// the flows do their transactions.
type timer interface {
	ResetTimer()
	StopTimer()
}

// portRange is the client's local port range; tests shrink it.
type portRange struct{ min, max int }

var netperfPorts = portRange{PortMin, PortMax}

// work is the run's shared budget: a flow takes tickets a block at a time
// (ticketBlock), and each transaction's latency goes in its ticket's slot.
// In mm=separate it lives in a
// memfd mapping every client process shares.
type work struct {
	n     int64
	next  *atomic.Int64
	abort *atomic.Bool
	lat   []int64
}

func newWork(n int) *work {
	return &work{n: int64(n), next: new(atomic.Int64), abort: new(atomic.Bool), lat: make([]int64, n)}
}

// runFlows runs n transactions over cfg.Flows flows against the netbench
// server at ctl and checks them.
func runFlows(ctl netip.AddrPort, cfg Config, n int, t timer, ports portRange) (*Result, error) {
	if cfg.Flows < 1 || cfg.Req < 1 || cfg.Rsp < 1 || n < 0 {
		return nil, fmt.Errorf("netbench: bad run %+v, n=%d", cfg, n)
	}
	if cfg.Shared {
		// A P for every client thread, every local server thread, and
		// two to spare (see ensureProcs); raised before the in-process
		// server raises it for its own threads, so that the old value
		// is restored.
		defer restoreProcs(ensureProcs(2*cfg.Flows + 2))
	}
	// The counter is read before any flow thread exists and after all
	// have ended: a flow thread's private fd table is a copy of the
	// process's, and the netstat file open during the copy would take a
	// slot the row's fd count does not give it.
	retrans0, err := synRetrans(netstatPath)
	if err != nil {
		return nil, fmt.Errorf("netbench: counting SYN retransmits: %w", err)
	}
	cc, err := dialControl(ctl)
	if err != nil {
		return nil, fmt.Errorf("no netbench server at %v: %w", ctl, err)
	}
	defer cc.Close()
	res := &Result{Client: make([]int64, cfg.Flows), Ports: make([]int, cfg.Flows)}
	specs := make([]clientArgs, cfg.Flows)
	for i := range specs {
		port, err := cc.open(cfg.Kind, cfg.Req, cfg.Rsp, cfg.Shared)
		if err != nil {
			return nil, err
		}
		res.Ports[i] = port
		// netperf: srand(getpid()); start = min + rand() % (max - min).
		specs[i] = clientArgs{Kind: int(cfg.Kind), Req: cfg.Req, Rsp: cfg.Rsp, Addr: ctl.Addr().String(), Port: port,
			Min: ports.min, Max: ports.max, Start: ports.min + rand.IntN(ports.max-ports.min), N: int64(n)}
	}
	run := runClientProcs
	if cfg.Shared {
		run = runClientThreads
	}
	counts, lat, errs := run(specs, n, t)
	for i, c := range counts {
		res.Client[i] = c.Txns
		res.Txns += c.Txns
		res.Skips += c.Skips
	}
	reports, stopErr := cc.stop()
	res.Server = reports
	retrans1, err := synRetrans(netstatPath)
	if err != nil {
		return res, fmt.Errorf("netbench: counting SYN retransmits: %w", err)
	}
	res.SynRetrans = retrans1 - retrans0
	if err := errors.Join(errs, stopErr); err != nil {
		// A client's error is often the echo of its server's (a refused
		// connect after the server flow failed): report both.
		return res, errors.Join(err, serverFailures(reports))
	}
	if res.Txns != int64(n) {
		return res, fmt.Errorf("clients completed %d transactions, want %d", res.Txns, n)
	}
	res.Lat = lat
	slices.Sort(res.Lat)
	i, _ := slices.BinarySearch(res.Lat, int64(SlowAfter)+1)
	res.Slow = int64(len(res.Lat) - i)
	return res, errors.Join(checkCounts(res.Client, res.Server), checkRetrans(res.SynRetrans, res.Txns))
}

// clientArgs is one client flow, as a child process gets it.
type clientArgs struct {
	Kind, Req, Rsp  int
	Addr            string // the server's address
	Port            int    // the flow's server data port
	Min, Max, Start int    // the local port walk
	N               int64  // transactions in the whole run
}

// flow builds the client flow a.
func (a clientArgs) flow() (*clientFlow, error) {
	ip, err := netip.ParseAddr(a.Addr)
	if err != nil {
		return nil, err
	}
	walk, err := newPortWalker(a.Min, a.Max, a.Start, a.Port)
	if err != nil {
		return nil, err
	}
	return newClientFlow(Kind(a.Kind), newPatterns(a.Req, a.Rsp), ip, a.Port, walk), nil
}

// clientCounts is what a client flow did.
type clientCounts struct{ Txns, Skips int64 }

// runClientThreads runs the flows as throw-away threads of this process
// (mm=shared).
func runClientThreads(specs []clientArgs, n int, t timer) ([]clientCounts, []int64, error) {
	counts := make([]clientCounts, len(specs))
	flows := make([]*clientFlow, len(specs))
	for i, a := range specs {
		f, err := a.flow()
		if err != nil {
			return counts, nil, err
		}
		flows[i] = f
	}
	w := newWork(n)
	start := make(chan struct{})
	// looped: a flow's last transaction is done (the timer stops there,
	// before RR's disconnect and the threads' exit); done: its thread is
	// gone.
	var ready, looped, done sync.WaitGroup
	errs := make([]error, len(flows))
	for i, f := range flows {
		ready.Add(1)
		looped.Add(1)
		done.Add(1)
		sync := flowSync{
			sweep:  true,
			ready:  ready.Done,
			begin:  func() error { <-start; return nil },
			looped: func() error { looped.Done(); return nil },
			failed: looped.Done,
		}
		go func() {
			defer done.Done()
			errs[i] = thread.Run(func() error { return f.run(w, sync) })
		}()
	}
	ready.Wait()
	t.ResetTimer()
	close(start)
	looped.Wait()
	t.StopTimer()
	done.Wait()
	for i, f := range flows {
		counts[i] = clientCounts{f.txns, f.skips}
	}
	return counts, w.lat, errors.Join(errs...)
}

// The client flow's role: fd 4 is the shared work.
var _ = child.Register("netbench-client", func(c *child.Ctx) error {
	var a clientArgs
	if err := c.Args(&a); err != nil {
		return err
	}
	f, err := a.flow()
	if err != nil {
		return err
	}
	w, unmap, err := mapWork(c.File(0), a.N)
	if err != nil {
		return err
	}
	defer unmap()
	return f.run(w, flowSync{
		ready:  func() {},
		begin:  func() error { return c.Ready(nil) },
		looped: func() error { return c.Result(clientCounts{f.txns, f.skips}) },
		failed: func() {},
	})
})

// workSize is the shared work's mapping: the next ticket, the abort flag,
// then one latency per transaction.
func workSize(n int64) int { return 16 + 8*int(n) }

// mapWork maps the shared work of n transactions from fd. The pages are
// populated now (MAP_POPULATE), before the clock runs: a page fault per
// process per page of latencies would be work netperf does not do.
func mapWork(fd int, n int64) (*work, func(), error) {
	mem, err := unix.Mmap(fd, 0, workSize(n), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return nil, nil, fmt.Errorf("mmap of the shared work: %s", skip.Errno(err))
	}
	w := &work{
		n:     n,
		next:  (*atomic.Int64)(unsafe.Pointer(&mem[0])),
		abort: (*atomic.Bool)(unsafe.Pointer(&mem[8])),
		lat:   unsafe.Slice((*int64)(unsafe.Pointer(&mem[16])), n),
	}
	return w, func() { unix.Munmap(mem) }, nil
}

// runClientProcs runs each flow as a child process, as lkp runs one
// netperf process per client (mm=separate).
func runClientProcs(specs []clientArgs, n int, t timer) ([]clientCounts, []int64, error) {
	counts := make([]clientCounts, len(specs))
	fd, err := unix.MemfdCreate("kbench-netbench", unix.MFD_CLOEXEC)
	if err != nil {
		return counts, nil, fmt.Errorf("memfd_create: %s", skip.Errno(err))
	}
	defer unix.Close(fd)
	if err := unix.Ftruncate(fd, int64(workSize(int64(n)))); err != nil {
		return counts, nil, fmt.Errorf("ftruncate of the shared work: %s", skip.Errno(err))
	}
	w, unmap, err := mapWork(fd, int64(n))
	if err != nil {
		return counts, nil, err
	}
	defer unmap()
	var g child.Group
	defer g.Close()
	for _, a := range specs {
		if _, err := g.Start(child.Spec{Role: "netbench-client", Args: a, Fds: []int{fd}}); err != nil {
			return counts, nil, err
		}
	}
	if err := g.Ready(); err != nil {
		return counts, nil, err
	}
	t.ResetTimer()
	if err := g.Go(); err != nil {
		return counts, nil, err
	}
	err = g.Results(func(i int) any { return &counts[i] })
	t.StopTimer()
	if err == nil {
		err = g.Wait()
	}
	if err != nil {
		return counts, nil, err
	}
	return counts, slices.Clone(w.lat), nil
}

// ticketBlock is how many tickets a flow takes at once. Blocks keep the
// shared counter and the latency slots of one flow off the cache lines
// other flows write (each take and each slot's store otherwise moves a
// line between CPUs, a tenth of TCP_RR's user time); netperf's flows share
// nothing. A flow that fails stops the others within a block.
const ticketBlock = 16

// flowSync is how a client flow meets the others: ready once set up,
// begin to wait for the start, looped once its last transaction is done.
// sweep closes the process's other sockets in the flow's fd table (a
// thread's copy holds them; a child process has none).
type flowSync struct {
	sweep  bool
	ready  func()
	begin  func() error
	looped func() error
	failed func() // instead of looped when the flow fails before its loop
}

// run is one flow's thread: set up (RR connects), wait for the start,
// then take tickets until the budget is spent.
func (f *clientFlow) run(w *work, s flowSync) error {
	err := ownFiles(-1, s.sweep)
	if err == nil && f.kind == RR {
		err = f.rrOpen()
	}
	s.ready()
	if err != nil {
		w.abort.Store(true)
		s.failed()
		return err
	}
	if err := s.begin(); err != nil {
		w.abort.Store(true)
		s.failed()
		return errors.Join(err, f.rrClose())
	}
	once := f.crr
	if f.kind == RR {
		once = f.rr
	}
	// One clock reading per transaction: its end is the next one's start,
	// so a latency also holds a block's take (an atomic add) when one
	// starts. A yield is left out.
	var y thread.Yielder
	t0 := thread.Clock()
	for err == nil && !w.abort.Load() {
		i := w.next.Add(ticketBlock) - ticketBlock
		if i >= w.n {
			break
		}
		for end := min(i+ticketBlock, w.n); i < end; i++ {
			if err = once(); err != nil {
				w.abort.Store(true)
				break
			}
			t1 := thread.Clock()
			w.lat[i] = int64(t1 - t0)
			t0 = t1
			if y.Tick(t1) {
				t0 = thread.Clock()
			}
		}
	}
	err = errors.Join(err, y.Err())
	if lerr := s.looped(); err == nil {
		err = lerr
	}
	if f.kind == RR {
		err = errors.Join(err, f.rrClose())
	}
	return err
}

// checkCounts compares, flow by flow, the transactions the clients
// completed with those the server answered, and fails on any request the
// server found a wrong byte in or any flow the server saw fail.
func checkCounts(client []int64, server []flowReport) error {
	if len(client) != len(server) {
		return fmt.Errorf("server reported %d flows, clients ran %d", len(server), len(client))
	}
	errs := []error{serverFailures(server)}
	for i := range client {
		s := server[i]
		if s.badReqs != 0 {
			errs = append(errs, fmt.Errorf("flow %d: server received %d request(s) with a wrong byte", i, s.badReqs))
		}
		if s.txns != client[i] {
			errs = append(errs, fmt.Errorf("flow %d: client completed %d transactions, server answered %d", i, client[i], s.txns))
		}
	}
	return errors.Join(errs...)
}

// checkRetrans fails a run whose clients' kernel retransmitted SYNs for
// more than 1% of its transactions: those transactions waited out a
// retransmit timeout (a TIME_WAIT collision, a full backlog), which is
// not the work netperf's transactions do. The count is the network
// namespace's, so another program's connects in the same namespace during
// the run count too.
func checkRetrans(retrans, total int64) error {
	if retrans*100 > total {
		return fmt.Errorf("the kernel retransmitted %d SYNs during %d transactions (%.2f%%), more than 1%% (TcpExt TCPSynRetrans): TIME_WAIT collisions or a full backlog",
			retrans, total, 100*float64(retrans)/float64(total))
	}
	return nil
}

// serverFailures joins the errors the server's flows (processes or
// threads) reported.
func serverFailures(server []flowReport) error {
	var errs []error
	for i, s := range server {
		if s.err != "" {
			errs = append(errs, fmt.Errorf("flow %d: server: %s", i, s.err))
		}
	}
	return errors.Join(errs...)
}
