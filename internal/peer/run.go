//go:build linux

package peer

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/kbench/kbench/internal/child"
	"github.com/kbench/kbench/internal/cpus"
	"github.com/kbench/kbench/internal/region"
	"github.com/kbench/kbench/internal/thread"
)

// Link is a side's end of its row: the same whether the side is a child
// process (a *child.Ctx) or a thread of the test binary.
type Link interface {
	// Args decodes the side's arguments (Side.Args).
	Args(v any) error
	// File is the side's inherited file i (Side.Fds[i]).
	File(i int) int
	// Next waits for the next round and decodes its arguments into v; it
	// returns false when the row ends instead.
	Next(v any) (bool, error)
	// Ready says the side is set up for the round, with info (nil for
	// none), and waits for the go.
	Ready(info any) error
	// Result sends the round's counts; the clock stops once every side
	// has sent its own.
	Result(v any) error
	// Look records the CPU the side runs on now in its Side.Watch (for
	// the row's placement meter and the check of its pin), after ops of
	// the side's ops (a count from any origin; the meter weighs each look
	// by the ops since the previous one). A side calls it at its chunk
	// boundaries (a Taker does at each take), and it looks at most once
	// a millisecond; Ready looks at the go. now is the caller's
	// thread.Clock reading, which its Yielder takes anyway. Without a
	// Watch it does nothing.
	Look(ops int64, now time.Duration)
}

// Body is a side's code: see the package doc for its loop.
type Body func(Link) error

var (
	bodiesMu sync.Mutex
	bodies   = map[string]Body{}
)

// Register makes body runnable as a side named role, in a child process
// (it is registered with internal/child too) or on a thread. Call it from
// package init (var _ = peer.Register(...)); a name registered twice
// panics.
func Register(role string, body Body) string {
	bodiesMu.Lock()
	defer bodiesMu.Unlock()
	if _, dup := bodies[role]; dup {
		panic("peer: role " + role + " registered twice")
	}
	bodies[role] = body
	child.Register(role, func(c *child.Ctx) error {
		l, err := newProcLink(c)
		if err != nil {
			return err
		}
		defer l.close()
		return body(l)
	})
	return role
}

// Side is one side of a row.
type Side struct {
	Role   string // a Register'ed body
	Args   any    // JSON-encoded for Link.Args
	Fds    []int  // Link.File(i): inherited by a process, shared by a thread
	Pin    bool   // pin the side's thread to CPU (Pinning.Pin)
	CPU    int
	Thread bool   // run on a throw-away thread of this process, not in a child
	Watch  *Watch // the side's end in its row's placement meter; nil for none
}

// Group is a row's started sides, as one: their child processes or
// threads and the parent's end of each, run in rounds and closed together.
type Group struct {
	sides  []Side
	procs  []*child.Proc
	ends   []end // in Side order
	broken error
	closed bool
	defers []func(error) error
}

// end is the parent's view of one side.
type end interface {
	round(v any) error
	ready() error
	goNow() error
	result(v any) error
	stop() error
	wait() error
	kill()
}

// Start starts every side; none does its ops before the first Round. A
// refused fork or exec is a skip.Unsupported (internal/child).
func Start(sides []Side) (*Group, error) {
	r := &Group{sides: sides}
	for _, s := range sides {
		bodiesMu.Lock()
		body, ok := bodies[s.Role]
		bodiesMu.Unlock()
		if !ok {
			r.kill()
			return nil, fmt.Errorf("peer: no side %q registered", s.Role)
		}
		if s.Watch != nil {
			s.Watch.expect(s.Pin, s.CPU)
		}
		if s.Thread {
			t, err := startThread(s, body)
			if err != nil {
				r.kill()
				return nil, err
			}
			r.ends = append(r.ends, t)
			continue
		}
		args, fds, err := procArgs(s)
		if err != nil {
			r.kill()
			return nil, err
		}
		p, err := child.Start(child.Spec{Role: s.Role, Args: args, Fds: fds, Pin: s.Pin, CPU: s.CPU})
		if err != nil {
			r.kill()
			return nil, err
		}
		r.procs = append(r.procs, p)
		r.ends = append(r.ends, procEnd{p})
	}
	return r, nil
}

// Pids lists the sides' child processes (none for threads).
func (r *Group) Pids() []int {
	var pids []int
	for _, p := range r.procs {
		pids = append(pids, p.Pid)
	}
	return pids
}

// Round runs one round: it sends args(i) to side i (args nil: none),
// waits until every side is ready, calls t.StartTimer, says go, waits for
// every side's result (into(i) is where side i's is decoded; nil: none)
// and calls t.StopTimer. t may be nil. A failed round kills the sides and
// breaks the Group: later rounds return the same error.
func (r *Group) Round(args func(i int) any, t region.Timer, into func(i int) any) error {
	if err := r.Begin(args, t); err != nil {
		return err
	}
	return r.End(t, into)
}

// Begin is a round's first half: it returns once every side is ready
// and has been told to go. End, which may run on another goroutine, is
// its second: a round that lasts as long as its sides serve (netbench's
// server flows, from OPEN to STOP) is a Begin and an End.
func (r *Group) Begin(args func(i int) any, t region.Timer) error {
	if r.broken != nil {
		return r.broken
	}
	if r.closed {
		return errors.New("peer: round on a closed run")
	}
	for i, e := range r.ends {
		var a any
		if args != nil {
			a = args(i)
		}
		if err := e.round(a); err != nil {
			return r.fail(err)
		}
	}
	if err := r.each(func(_ int, e end) error { return e.ready() }); err != nil {
		return r.fail(err)
	}
	if t != nil {
		t.StartTimer()
	}
	for _, e := range r.ends {
		if err := e.goNow(); err != nil {
			return r.fail(err)
		}
	}
	return nil
}

// End waits for every side's result of the round Begin started and
// calls t.StopTimer (see Round).
func (r *Group) End(t region.Timer, into func(i int) any) error {
	err := r.each(func(i int, e end) error {
		var v any
		if into != nil {
			v = into(i)
		}
		return e.result(v)
	})
	if t != nil {
		t.StopTimer()
	}
	if err != nil {
		return r.fail(err)
	}
	return nil
}

// fail breaks the Group with err and kills the sides.
func (r *Group) fail(err error) error {
	r.broken = err
	r.kill()
	return err
}

// Kill kills the child processes and gives the thread sides up (a round
// waiting for them fails), for a parent that cannot wait any longer: a
// side still serving a client that neither finishes nor closes. Close
// still reaps them.
func (r *Group) Kill() { r.kill() }

// Defer has Close call fn once the sides have ended and been reaped, also
// after a failed round: what a row set up beside its sides and keeps as
// long as they live (a control connection, a server, listening sockets),
// and its checks of what the sides leave behind, at the row's end rather
// than per round. fn gets the sides' error (nil after clean rounds), so
// that it can leave out checks a failure makes moot. Close calls them
// last deferred first and joins their errors to its own.
func (r *Group) Defer(fn func(sides error) error) { r.defers = append(r.defers, fn) }

// Close ends the sides after their last round and reaps them: their
// errors, or the failed round's, joined with the deferred functions'. It
// may be called more than once; the sides end and the deferred functions
// run once.
func (r *Group) Close() error {
	if r.closed {
		return r.broken
	}
	r.closed = true
	r.closeSides()
	sides := r.broken
	var errs []error
	for i := len(r.defers) - 1; i >= 0; i-- {
		if err := r.defers[i](sides); err != nil {
			errs = append(errs, err)
		}
	}
	r.defers = nil
	if len(errs) > 0 {
		r.broken = errors.Join(append([]error{r.broken}, errs...)...)
	}
	return r.broken
}

// closeSides stops and reaps the sides, leaving their error in r.broken.
func (r *Group) closeSides() {
	defer r.join()
	if r.broken != nil {
		r.kill()
		return
	}
	for _, e := range r.ends {
		if err := e.stop(); err != nil {
			r.broken = err
			r.kill()
			return
		}
	}
	if err := r.each(func(_ int, e end) error { return e.wait() }); err != nil {
		r.broken = err
		r.kill()
	}
}

// join waits for every thread side's thread to end, so that none
// outlives its row.
func (r *Group) join() {
	for _, e := range r.ends {
		if t, ok := e.(*threadEnd); ok {
			<-t.done
		}
	}
}

// kill kills the child processes and stops the threads that wait for the
// parent; threads in their loop end by the workload's own abort.
func (r *Group) kill() {
	for _, e := range r.ends {
		e.kill()
	}
}

// each runs fn on every side at once and returns the first failure, after
// killing the rest; failures that follow from that kill are left out.
func (r *Group) each(fn func(int, end) error) error {
	errs := make([]error, len(r.ends))
	var wg sync.WaitGroup
	var once sync.Once
	first := -1
	for i, e := range r.ends {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := fn(i, e); err != nil {
				errs[i] = err
				once.Do(func() {
					first = i
					r.kill()
				})
			}
		}()
	}
	wg.Wait()
	if first < 0 {
		return nil
	}
	out := []error{errs[first]}
	for i, err := range errs {
		if err != nil && i != first && !killedHere(r.ends[i]) && !errors.Is(err, errKilled) && !errors.Is(err, child.ErrStopped) {
			out = append(out, err)
		}
	}
	return errors.Join(out...)
}

func killedHere(e end) bool {
	p, ok := e.(procEnd)
	return ok && p.Killed()
}

// procEnd is a side in a child process.
type procEnd struct{ *child.Proc }

func (p procEnd) round(v any) error  { return p.Proc.Round(v) }
func (p procEnd) ready() error       { return p.Proc.Ready() }
func (p procEnd) goNow() error       { return p.Proc.Go() }
func (p procEnd) result(v any) error { return p.Proc.Result(v) }
func (p procEnd) stop() error        { return p.Proc.Stop() }
func (p procEnd) wait() error        { return p.Proc.Wait() }
func (p procEnd) kill()              { p.Proc.Kill() }

// errKilled is what a thread side's parent end returns after kill.
var errKilled = errors.New("peer: side stopped after another side failed")

// threadEnd is a side on a throw-away thread: the child protocol over
// channels, with JSON for the arguments and results so that the side's
// code sees what a child would.
type threadEnd struct {
	side   Side
	to     chan tmsg // parent -> side: round, go, stop
	from   chan tmsg // side -> parent: ready, result, end
	killed chan struct{}
	once   sync.Once
	done   chan struct{}
	err    error // the side's, once done
}

type tmsg struct {
	k   string
	d   []byte
	err error
}

func startThread(s Side, body Body) (*threadEnd, error) {
	t := &threadEnd{side: s, to: make(chan tmsg, 1), from: make(chan tmsg, 1), killed: make(chan struct{}), done: make(chan struct{})}
	l := &threadLink{t: t}
	var view *Mem
	if w := s.Watch; w != nil {
		// The side's own view of the meter, as a process has: a thread
		// still running when its row gives it up (netbench's server
		// flows after STOP) never looks into a meter unmapped.
		var err error
		if view, err = MapMem(w.m.fd, w.m.off+MeterSize(w.m.pairs)); err != nil {
			return nil, err
		}
		l.looker = newLooker(view, w.m.off, w.slot)
	}
	go func() {
		defer close(t.done)
		if view != nil {
			defer view.Close()
		}
		t.err = thread.Run(func() error {
			if s.Pin {
				if err := cpus.Pin(s.CPU); err != nil {
					return err
				}
			}
			return body(l)
		})
		if t.err == nil && l.inRound {
			t.err = fmt.Errorf("peer: side %s returned in a round without its result", s.Role)
		}
		t.send(tmsg{k: "end", err: t.err})
	}()
	return t, nil
}

// send delivers m to the parent unless it has given the side up.
func (t *threadEnd) send(m tmsg) {
	select {
	case t.from <- m:
	case <-t.killed:
	}
}

func (t *threadEnd) recvSide() (tmsg, bool) {
	select {
	case m := <-t.to:
		return m, true
	case <-t.killed:
		return tmsg{}, false
	}
}

func (t *threadEnd) put(k string, v any) error {
	var d []byte
	if v != nil {
		var err error
		if d, err = json.Marshal(v); err != nil {
			return fmt.Errorf("peer: %s for side %s: %v", k, t.side.Role, err)
		}
	}
	select {
	case t.to <- tmsg{k: k, d: d}:
		return nil
	case <-t.done:
		return t.ended(k)
	}
}

func (t *threadEnd) ended(want string) error {
	<-t.done
	if t.err != nil {
		return fmt.Errorf("side %s (thread): %w", t.side.Role, t.err)
	}
	return fmt.Errorf("side %s (thread) ended before its %s", t.side.Role, want)
}

func (t *threadEnd) get(want string, v any) error {
	select {
	case m := <-t.from:
		if m.k == "end" {
			if m.err != nil {
				return fmt.Errorf("side %s (thread): %w", t.side.Role, m.err)
			}
			if want == "end" {
				return nil
			}
			return fmt.Errorf("side %s (thread) ended before its %s", t.side.Role, want)
		}
		if m.k != want {
			return fmt.Errorf("side %s (thread) sent %s, want %s", t.side.Role, m.k, want)
		}
		if v != nil {
			if err := json.Unmarshal(m.d, v); err != nil {
				return fmt.Errorf("side %s (thread): bad %s %s: %v", t.side.Role, want, m.d, err)
			}
		}
		return nil
	case <-t.killed:
		return errKilled
	}
}

func (t *threadEnd) round(v any) error  { return t.put("round", v) }
func (t *threadEnd) ready() error       { return t.get("ready", nil) }
func (t *threadEnd) goNow() error       { return t.put("go", nil) }
func (t *threadEnd) result(v any) error { return t.get("result", v) }
func (t *threadEnd) stop() error        { return t.put("stop", nil) }
func (t *threadEnd) wait() error {
	err := t.get("end", nil)
	<-t.done
	return err
}

// kill gives the side up: a side waiting for the parent gets
// child.ErrStopped; the thread is waited for in wait, and a side in its
// loop ends by the workload's abort.
func (t *threadEnd) kill() { t.once.Do(func() { close(t.killed) }) }

// threadLink is a thread side's Link.
type threadLink struct {
	t              *threadEnd
	ready, inRound bool
	looker         *looker // the side's Watch, in a mapping of its own
}

func (l *threadLink) Look(ops int64, now time.Duration) { l.looker.look(ops, now) }

func (l *threadLink) Args(v any) error {
	d, err := json.Marshal(l.t.side.Args)
	if err == nil {
		err = json.Unmarshal(d, v)
	}
	if err != nil {
		return fmt.Errorf("peer: side %s: arguments: %v", l.t.side.Role, err)
	}
	return nil
}

func (l *threadLink) File(i int) int { return l.t.side.Fds[i] }

func (l *threadLink) Next(v any) (bool, error) {
	if l.inRound {
		return false, errors.New("peer: Next in a round that has sent no Result")
	}
	m, ok := l.t.recvSide()
	if !ok {
		return false, child.ErrStopped
	}
	switch m.k {
	case "round":
		l.inRound, l.ready = true, false
		if v != nil {
			if err := json.Unmarshal(m.d, v); err != nil {
				return false, fmt.Errorf("peer: side %s: bad round %s: %v", l.t.side.Role, m.d, err)
			}
		}
		return true, nil
	case "stop":
		return false, nil
	}
	return false, fmt.Errorf("peer: side %s got %s, want round or stop", l.t.side.Role, m.k)
}

func (l *threadLink) Ready(info any) error {
	if !l.inRound || l.ready {
		return errors.New("peer: Ready outside a round, or twice in one")
	}
	l.ready = true
	var d []byte
	if info != nil {
		var err error
		if d, err = json.Marshal(info); err != nil {
			return err
		}
	}
	l.t.send(tmsg{k: "ready", d: d})
	m, ok := l.t.recvSide()
	if !ok || m.k == "stop" {
		return child.ErrStopped
	}
	if m.k != "go" {
		return fmt.Errorf("peer: side %s got %s, want go", l.t.side.Role, m.k)
	}
	l.looker.goLook()
	return nil
}

func (l *threadLink) Result(v any) error {
	if !l.inRound || !l.ready {
		return errors.New("peer: Result outside a round, or before Ready")
	}
	l.inRound = false
	d, err := json.Marshal(v)
	if err != nil {
		return err
	}
	l.t.send(tmsg{k: "result", d: d})
	return nil
}
