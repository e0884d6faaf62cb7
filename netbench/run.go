//go:build linux

package netbench

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"time"

	"github.com/kbench/kbench/internal/peer"
	"github.com/kbench/kbench/internal/region"
	"github.com/kbench/kbench/internal/skip"
	"github.com/kbench/kbench/internal/thread"
	"github.com/kbench/kbench/internal/unit"
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
	// CPU places each flow's client (the pair's first end) and server;
	// "" is peer.Any. Pinned rows need the in-process server.
	CPU peer.Placement
}

// Result is what one run measured.
type Result struct {
	Txns int64   // transactions completed and checked by the clients
	Lat  []int64 // the timed transactions' latencies in ns (one in LatEvery), sorted
	Slow int64   // timed transactions slower than SlowAfter
	// SynRetrans is the network namespace's TCPSynRetrans over the run:
	// SYNs the clients' kernel sent again.
	SynRetrans int64
	Skips      int64   // local ports refused and walked past
	Client     []int64 // per flow: the client's count
	Ports      []int   // per flow: the server's data port
	Server     []flowReport
	// Seen is the placement meter's looks in the round: with an
	// in-process server (Metered), the share of transactions whose
	// client and server were last seen on one CPU.
	Seen    peer.Reading
	Metered bool
}

// Percentile returns the p-th percentile latency (nearest rank).
func (r *Result) Percentile(p float64) time.Duration {
	return time.Duration(unit.Percentile(r.Lat, p))
}

// add adds the round o to r, for a row of several rounds
// (internal/rounds): the transactions and what the row reports of them,
// their latencies and the meter's looks. r.Lat is left unsorted (the
// row sorts it once, after its region, where its instruments do not
// count the parent's work). The per-flow counts and ports stay those of
// a round: each round checks its own.
func (r *Result) add(o *Result) {
	r.Txns += o.Txns
	r.Slow += o.Slow
	r.SynRetrans += o.SynRetrans
	r.Skips += o.Skips
	r.Lat = append(r.Lat, o.Lat...)
	r.Seen.Add(o.Seen)
	r.Metered = o.Metered
}

// portRange is the client's local port range; tests shrink it.
type portRange struct{ min, max int }

var netperfPorts = portRange{PortMin, PortMax}

// The shared memory of a row's client flows (peer.Mem): the round's
// budget of transactions, which a flow takes a block at a time
// (ticketBlock), then the flows' placement meter (peer.Meter, which the
// in-process server's flows share), then one latency slot per timed
// transaction (LatEvery), by ticket. The meter and the slots start on cache lines
// of their own, so that a block of 16 (two lines) shares no line with
// the budget's counter or another flow's block.
const meterOff = 64

var _ [meterOff - peer.BudgetSize]struct{} // the budget fits before the meter

// latOff is where the latency slots start for flows flows.
func latOff(flows int) int { return meterOff + peer.MeterSize(flows) }

// LatEvery is how many transactions a flow does per one it times, the
// first of each block of tickets: a throughput row reads no clock per
// transaction, as netperf (without histograms) reads none.
const LatEvery = ticketBlock

// latSlots is how many of n transactions are timed.
func latSlots(n int) int { return (n + LatEvery - 1) / LatEvery }

// flows is a row's flows: the control connection with the server flows it
// opened, and the client flows as sides (processes, or threads for
// mm=shared) that take their transactions from one shared budget. They
// are set up once per row and run rounds on them (peer.Kept): the RR
// connections, the server flows and the client processes live for the
// row, as netperf's do for its run.
type flows struct {
	cfg     Config
	cc      *controlClient
	ports   []int // per flow: the server's data port
	mem     *peer.Mem
	budget  *peer.Budget
	meter   *peer.Meter
	metered bool // the server flows look too: the server is in this process
	run     *peer.Group
	retrans int64        // TCPSynRetrans at the last reading
	server  []flowReport // the server's counts at the last reading
	final   []flowReport // the server's counts at STOP
	closed  bool
}

// startFlows opens cfg.Flows flows against the netbench server at ctl and
// starts their clients; none transacts before a round. after (nil for
// none) runs once the flows have ended: the in-process server's Close.
func startFlows(ctl netip.AddrPort, cfg Config, ports portRange, after func() error) (fl *flows, err error) {
	if cfg.Flows < 1 || cfg.Req < 1 || cfg.Rsp < 1 {
		return nil, fmt.Errorf("netbench: bad run %+v", cfg)
	}
	if cfg.CPU == "" {
		cfg.CPU = peer.Any
	}
	srv := local(ctl)
	if cfg.CPU != peer.Any && srv == nil {
		return nil, &skip.Unsupported{Feature: "cpu=" + string(cfg.CPU) + " with the server at " + ctl.String(),
			Hint: "the pinned rows place both ends of a flow on this machine: run them without KBENCH_NET_SERVER"}
	}
	place, err := peer.Place(cfg.CPU)
	if err != nil {
		return nil, err
	}
	var undo []func() error
	if after != nil {
		undo = append(undo, after)
	}
	defer func() {
		if err != nil {
			for i := len(undo) - 1; i >= 0; i-- {
				undo[i]()
			}
		}
	}()
	if cfg.Shared {
		// Raised before the in-process server raises it for its own
		// threads, so that the old value is restored (see round).
		defer restoreProcs(ensureProcs(2*cfg.Flows + 2))
	}
	fl = &flows{cfg: cfg, ports: make([]int, cfg.Flows), server: make([]flowReport, cfg.Flows)}
	// The counter is read before any flow thread exists, and then after
	// each round, once every flow thread has made its fd table: a flow
	// thread's private table is a copy of the process's, and the netstat
	// file open during the copy would take a slot the row's fd count does
	// not give it.
	if fl.retrans, err = synRetrans(netstatPath); err != nil {
		return nil, fmt.Errorf("netbench: counting SYN retransmits: %w", err)
	}
	if fl.cc, err = dialControl(ctl); err != nil {
		return nil, fmt.Errorf("no netbench server at %v: %w", ctl, err)
	}
	undo = append(undo, fl.cc.Close)
	if fl.mem, err = peer.NewMem("kbench-netbench", latOff(cfg.Flows)); err != nil {
		return nil, err
	}
	undo = append(undo, fl.mem.Close)
	fl.budget = peer.NewBudget(fl.mem, 0)
	if fl.meter, err = peer.NewMeter(fl.mem, meterOff, cfg.Flows, "flow", "client", "server"); err != nil {
		return nil, err
	}
	undo = append(undo, fl.meter.Close)
	var meterWord func(i int) []string
	if srv != nil {
		id, drop := srv.addMeter(fl.meter)
		undo = append(undo, func() error { drop(); return nil })
		fl.metered = true
		meterWord = func(i int) []string { return []string{fmt.Sprintf("meter=%d.%d", id, i)} }
	}
	sides := make([]peer.Side, cfg.Flows)
	for i := range sides {
		var words []string
		if meterWord != nil {
			words = meterWord(i)
		}
		if pin, cpu := place.End(i, 1); pin {
			words = append(words, fmt.Sprintf("cpu=%d", cpu)) // netperf's -T ,rcpu
		}
		port, err := fl.cc.open(cfg.Kind, cfg.Req, cfg.Rsp, cfg.Shared, words...)
		if err != nil {
			return nil, err
		}
		fl.ports[i] = port
		// netperf: srand(getpid()); start = min + rand() % (max - min).
		a := clientArgs{Kind: int(cfg.Kind), Req: cfg.Req, Rsp: cfg.Rsp, Addr: ctl.Addr().String(), Port: port,
			Min: ports.min, Max: ports.max, Start: ports.min + rand.IntN(ports.max-ports.min), Sweep: cfg.Shared,
			LatOff: latOff(cfg.Flows)}
		sides[i] = peer.Side{Role: clientRole, Args: a, Fds: []int{fl.mem.Fd()}, Thread: cfg.Shared, Watch: fl.meter.Watch(i, 0)}
		place.Pin(&sides[i], i, 0) // netperf's -T lcpu
	}
	if fl.run, err = peer.Start(sides); err != nil {
		return nil, err
	}
	for _, fn := range undo {
		fl.run.Defer(func(error) error { return fn() })
	}
	// The server's flows end after the clients' (a server flow serving an
	// RR connection ends when its client closes it).
	fl.run.Defer(func(error) error {
		var err error
		fl.final, err = fl.cc.stop()
		return errors.Join(err, serverFailures(fl.final))
	})
	return fl, nil
}

// close ends the client flows, then the server's, and returns their
// errors; after the first call it returns nil.
func (fl *flows) close() error {
	if fl.closed {
		return nil
	}
	fl.closed = true
	return fl.run.Close()
}

// round runs n transactions over the flows, with the clock running only
// while the flows do them, and checks them: the clients' counts against
// what the server answered in the round, flow by flow, and the SYNs the
// kernel retransmitted. A failed side ends the flows (close); a failed
// check leaves them to the caller.
func (fl *flows) round(n int, t region.Timer) (*Result, error) {
	if n < 0 {
		return nil, fmt.Errorf("netbench: %d transactions", n)
	}
	if fl.cfg.Shared {
		// A P for every client thread, every local server thread, and
		// two to spare (see ensureProcs), for the round only: the
		// testing package sets GOMAXPROCS back to its -cpu value after
		// a row's first trial, and warns of one a row leaves changed.
		defer restoreProcs(ensureProcs(2*fl.cfg.Flows + 2))
	}
	// The latency slots grow with the round, before the sides map them
	// (their Ready), so that no flow takes a page fault in the round.
	if size := latOff(fl.cfg.Flows) + 8*latSlots(n); size > fl.mem.Len() {
		if err := fl.mem.Resize(size); err != nil {
			return nil, err
		}
		fl.budget = peer.NewBudget(fl.mem, 0) // in the new mapping
	}
	fl.budget.Reset(int64(n))
	counts := make([]clientCounts, fl.cfg.Flows)
	res := &Result{Client: make([]int64, fl.cfg.Flows), Ports: fl.ports, Metered: fl.metered}
	err := fl.run.Round(func(int) any { return clientRound{N: int64(n), Size: fl.mem.Len()} }, t,
		func(i int) any { return &counts[i] })
	for i, c := range counts {
		res.Client[i] = c.Txns
		res.Txns += c.Txns
		res.Skips += c.Skips
	}
	if err != nil {
		// A client's error is often the echo of its server's (a refused
		// connect after the server flow failed): ending the flows
		// reports both.
		return res, fl.close()
	}
	retrans, err := synRetrans(netstatPath)
	if err != nil {
		return res, fmt.Errorf("netbench: counting SYN retransmits: %w", err)
	}
	res.SynRetrans, fl.retrans = retrans-fl.retrans, retrans
	now, err := fl.cc.counts()
	if err != nil {
		return res, err
	}
	res.Server = make([]flowReport, len(now))
	for i, r := range now {
		res.Server[i] = r
		if i < len(fl.server) {
			res.Server[i].txns -= fl.server[i].txns
			res.Server[i].badReqs -= fl.server[i].badReqs
		}
	}
	fl.server = now
	// The server flows' looks (the pin check of theirs too) count with
	// the meter: with a remote server only the clients'.
	seen, merr := fl.meter.Read()
	res.Seen = seen
	if res.Txns != int64(n) {
		return res, errors.Join(fmt.Errorf("clients completed %d transactions, want %d", res.Txns, n), merr)
	}
	res.Lat = slices.Clone(fl.mem.Int64s(latOff(fl.cfg.Flows), latSlots(n)))
	slices.Sort(res.Lat)
	i, _ := slices.BinarySearch(res.Lat, int64(SlowAfter)+1)
	res.Slow = int64(len(res.Lat) - i)
	return res, errors.Join(checkCounts(res.Client, res.Server), checkRetrans(res.SynRetrans, res.Txns), merr)
}

// runFlows runs n transactions over cfg.Flows flows against the netbench
// server at ctl, in one round of flows started for it, and checks them.
func runFlows(ctl netip.AddrPort, cfg Config, n int, t region.Timer, ports portRange) (*Result, error) {
	fl, err := startFlows(ctl, cfg, ports, nil)
	if err != nil {
		return nil, err
	}
	res, err := fl.round(n, t)
	return res, errors.Join(err, fl.close())
}

// clientArgs is one client flow, as its side gets it.
type clientArgs struct {
	Kind, Req, Rsp  int
	Addr            string // the server's address
	Port            int    // the flow's server data port
	Min, Max, Start int    // the local port walk
	// Sweep closes the process's other sockets in the flow's fd table
	// (a thread's copy holds them; a child process has none).
	Sweep bool
	// LatOff is where the latency slots start in the shared memory.
	LatOff int
}

// clientRound is a round of the flows: N transactions, and the shared
// memory's size, which holds their latency slots.
type clientRound struct {
	N    int64
	Size int
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

// clientCounts is what a client flow did in a round.
type clientCounts struct{ Txns, Skips int64 }

// ticketBlock is how many tickets a flow takes at once. Blocks keep the
// shared counter and the latency slots of one flow off the cache lines
// other flows write (each take and each slot's store otherwise moves a
// line between CPUs, a tenth of TCP_RR's user time); netperf's flows share
// nothing. A flow that fails stops the others within a block.
const ticketBlock = 16

// clientRole is a client flow, a child process (mm=separate) or a thread
// (mm=shared): it sets up (RR connects), then runs rounds, each taking
// tickets from the shared budget in file 0 until it is spent.
var clientRole = peer.Register("netbench-client", func(l peer.Link) error {
	var a clientArgs
	if err := l.Args(&a); err != nil {
		return err
	}
	f, err := a.flow()
	if err != nil {
		return err
	}
	if err := ownFiles(-1, a.Sweep); err != nil {
		return err
	}
	m, err := peer.MapMem(l.File(0), a.LatOff)
	if err != nil {
		return err
	}
	defer m.Close()
	if f.kind == RR {
		if err := f.rrOpen(); err != nil {
			return err
		}
	}
	err = f.rounds(l, m, a.LatOff)
	if f.kind == RR {
		err = errors.Join(err, f.rrClose())
	}
	return err
})

// rounds runs the flow's rounds until the row ends. A flow that fails
// aborts the round's budget, so that the others stop within a block.
func (f *clientFlow) rounds(l peer.Link, m *peer.Mem, latOff int) error {
	for {
		var r clientRound
		if ok, err := l.Next(&r); !ok || err != nil {
			return err
		}
		// The parent grew the memory for this round's latency slots.
		if err := m.Remap(r.Size); err != nil {
			return err
		}
		b, lat := peer.NewBudget(m, 0), m.Int64s(latOff, latSlots(int(r.N)))
		if err := l.Ready(nil); err != nil {
			return err
		}
		txns, skips := f.txns, f.skips
		if err := f.loop(peer.NewTaker(b, ticketBlock).Looking(l), lat); err != nil {
			b.Abort()
			return err
		}
		if err := l.Result(clientCounts{f.txns - txns, f.skips - skips}); err != nil {
			return err
		}
	}
}

// loop takes tickets until the round's budget is spent or aborted, and
// does a transaction for each, timing one in LatEvery: from just before
// its first system call to just after its last, so that the take, a
// yield and a look are left out. The Taker ticks its Yielder at each
// take; a CRR flow ticks it every tickCRR transactions too.
func (f *clientFlow) loop(t *peer.Taker, lat []int64) error {
	once, tick := f.crr, int64(tickCRR)
	if f.kind == RR {
		once, tick = f.rr, ticketBlock
	}
	for {
		i, ok := t.Next()
		if !ok {
			return t.Err()
		}
		timed, t0 := i%LatEvery == 0, time.Duration(0)
		if timed {
			t0 = thread.Clock()
		} else if i%tick == 0 {
			t.Y.Tick(thread.Clock())
		}
		if err := once(); err != nil {
			return err
		}
		if timed {
			lat[i/LatEvery] = int64(thread.Clock() - t0)
		}
	}
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
