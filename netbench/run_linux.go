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

	"github.com/kbench/kbench/internal/rate"
	"github.com/kbench/kbench/internal/thread"
)

// SlowAfter is the latency above which a transaction counts as slow: a SYN
// retransmit (1 s) after a TIME_WAIT collision, not scheduling noise.
const SlowAfter = 200 * time.Millisecond

// Config is one benchmark row.
type Config struct {
	Kind     Kind
	Flows    int
	Req, Rsp int // request and response sizes in bytes
}

// Result is what one run measured.
type Result struct {
	Txns   int64   // transactions completed and checked by the clients
	Lat    []int64 // every transaction's latency in ns, sorted
	Slow   int64   // transactions slower than SlowAfter
	Skips  int64   // local ports refused and walked past
	Client []int64 // per flow: the client's count
	Ports  []int   // per flow: the server's data port
	Server []flowReport
}

// Percentile returns the p-th percentile latency (nearest rank).
func (r *Result) Percentile(p float64) time.Duration {
	return time.Duration(rate.Percentile(r.Lat, p))
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

// work is the run's shared budget: each transaction takes a ticket, and
// its latency goes in that ticket's slot.
type work struct {
	n     int64
	next  atomic.Int64
	abort atomic.Bool
	lat   []int64
}

// runFlows runs n transactions over cfg.Flows flows against the netbench
// server at ctl and checks them.
func runFlows(ctl netip.AddrPort, cfg Config, n int, t timer, ports portRange) (*Result, error) {
	if cfg.Flows < 1 || cfg.Req < 1 || cfg.Rsp < 1 || n < 0 {
		return nil, fmt.Errorf("netbench: bad run %+v, n=%d", cfg, n)
	}
	// A P for every client thread, every local server thread, and two to
	// spare (see ensureProcs); raised before the in-process server raises
	// it for its own threads, so that the old value is restored.
	defer restoreProcs(ensureProcs(2*cfg.Flows + 2))
	cc, err := dialControl(ctl)
	if err != nil {
		return nil, fmt.Errorf("no netbench server at %v: %w", ctl, err)
	}
	defer cc.Close()
	pat := newPatterns(cfg.Req, cfg.Rsp)
	flows := make([]*clientFlow, cfg.Flows)
	res := &Result{Client: make([]int64, len(flows)), Ports: make([]int, len(flows))}
	for i := range flows {
		port, err := cc.open(cfg.Kind, cfg.Req, cfg.Rsp)
		if err != nil {
			return nil, err
		}
		res.Ports[i] = port
		// netperf: srand(getpid()); start = min + rand() % (max - min).
		walk, err := newPortWalker(ports.min, ports.max, ports.min+rand.IntN(ports.max-ports.min), port)
		if err != nil {
			return nil, err
		}
		flows[i] = newClientFlow(cfg.Kind, pat, ctl.Addr(), port, walk)
	}

	w := &work{n: int64(n), lat: make([]int64, n)}
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
		go func() {
			defer done.Done()
			errs[i] = thread.Run(func() error { return f.run(w, &ready, &looped, start) })
		}()
	}
	ready.Wait()
	t.ResetTimer()
	close(start)
	looped.Wait()
	t.StopTimer()
	done.Wait()

	for i, f := range flows {
		res.Client[i] = f.txns
		res.Txns += f.txns
		res.Skips += f.skips
	}
	reports, stopErr := cc.stop()
	res.Server = reports
	if err := errors.Join(errors.Join(errs...), stopErr); err != nil {
		// A client's error is often the echo of its server's (a refused
		// connect after the server thread failed): report both.
		return res, errors.Join(err, serverFailures(reports))
	}
	if res.Txns != int64(n) {
		return res, fmt.Errorf("clients completed %d transactions, want %d", res.Txns, n)
	}
	res.Lat = w.lat
	slices.Sort(res.Lat)
	i, _ := slices.BinarySearch(res.Lat, int64(SlowAfter)+1)
	res.Slow = int64(len(res.Lat) - i)
	return res, errors.Join(checkCounts(res.Client, res.Server), checkSlow(res.Slow, res.Txns))
}

// run is one flow's thread: set up (RR connects), wait for the start,
// then take tickets until the budget is spent.
func (f *clientFlow) run(w *work, ready, looped *sync.WaitGroup, start <-chan struct{}) error {
	err := ownFiles(-1)
	if err == nil && f.kind == RR {
		err = f.rrOpen()
	}
	ready.Done()
	if err != nil {
		w.abort.Store(true)
		looped.Done()
		return err
	}
	<-start
	once := f.crr
	if f.kind == RR {
		once = f.rr
	}
	var y thread.Yielder
	for !w.abort.Load() {
		i := w.next.Add(1) - 1
		if i >= w.n {
			break
		}
		t0 := time.Now()
		if err = once(); err != nil {
			w.abort.Store(true)
			break
		}
		t1 := time.Now()
		w.lat[i] = int64(t1.Sub(t0))
		y.Tick(t1) // outside the transaction's latency
	}
	looped.Done()
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

// checkSlow fails a run where more than 1% of the transactions took
// longer than SlowAfter.
func checkSlow(slow, total int64) error {
	if slow*100 > total {
		return fmt.Errorf("%d of %d transactions (%.2f%%) took longer than %v, more than 1%%: SYN retransmits (TIME_WAIT collisions, a full backlog) or a stalled machine",
			slow, total, 100*float64(slow)/float64(total), SlowAfter)
	}
	return nil
}

// serverFailures joins the errors the server's flow threads reported.
func serverFailures(server []flowReport) error {
	var errs []error
	for i, s := range server {
		if s.err != "" {
			errs = append(errs, fmt.Errorf("flow %d: server: %s", i, s.err))
		}
	}
	return errors.Join(errs...)
}
