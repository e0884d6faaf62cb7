//go:build linux

package netbench

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kbench/kbench/internal/cpus"
	"github.com/kbench/kbench/internal/limits"
	"github.com/kbench/kbench/internal/peer"
	"github.com/kbench/kbench/internal/skip"
)

// The control connection plays netperf's control channel: the client asks
// the server for flows, learns their data ports, after each round asks for
// the server's counts so far, and at the end of the row stops the flows.
// It is plain line-based text over TCP through Go's net package; no
// transaction goes over it.
//
//	client: OPEN crr|rr <req> <rsp> [separate|shared] [cpu=<n>] [meter=<id>.<flow>]
//	                                    server: OK <port> | ERR <text>
//	client: COUNTS                      server: FLOW <i> <txns> <badreqs> <error or ->
//	                                            ... one line per flow, then END
//	client: STOP                        server: FLOW ... as for COUNTS, then END
//	client: SYSCTL                      server: SYSCTL <name> <value>
//	                                            ... one line per tcpSysctls, then END
//
// OPEN's fifth word is the flow server's shape: its own process
// (separate, the default, as netserver forks one per test) or a thread
// of the server's (shared); cpu= pins the flow's server to a CPU
// (netperf's -T ,rcpu), and meter= names an in-process row's placement
// meter (Server.addMeter) and the flow's pair in it, which only a server
// in the row's own process has. COUNTS reports each flow's counts since it opened,
// while the flows run on (a flow process keeps them in memory it shares
// with the server), and the error of a flow that has ended with one. STOP
// ends every flow opened on the connection and reports their final
// counts. A control connection that closes stops its flows too, so a
// client that dies leaves nothing behind.

// Kind is the netperf test: a connection per transaction, or one
// persistent connection.
type Kind int

const (
	CRR Kind = iota // TCP_CRR: connect, request, response, close
	RR              // TCP_RR: request, response on one connection
)

func (k Kind) String() string {
	if k == RR {
		return "rr"
	}
	return "crr"
}

func parseKind(s string) (Kind, error) {
	switch s {
	case "crr":
		return CRR, nil
	case "rr":
		return RR, nil
	}
	return 0, fmt.Errorf("unknown test %q (crr or rr)", s)
}

// Message limits the server accepts.
const (
	maxMessage = 1 << 20
	maxFlows   = 1024
)

// Server is a netbench server: it accepts control connections and runs
// the flows they open, each on its own OS thread with its own listening
// socket on the address the control connection arrived at.
type Server struct {
	ln    net.Listener
	hooks *serverHooks                  // tests only
	logf  func(format string, a ...any) // if set, told about every STOP

	closing atomic.Bool // Close has begun

	mu      sync.Mutex
	conns   map[net.Conn]struct{}
	live    int // flows running
	threads int // of them, flows on threads of this process
	wg      sync.WaitGroup
	meters  map[int]*peer.Meter // in-process rows' placement meters (addMeter)
	meterID int
}

// inProcess holds the servers this process listens with, by control
// address, so that a row in the same process finds its server and can
// hand it the row's placement meter (local).
var inProcess sync.Map // netip.AddrPort -> *Server

// local returns the server this process runs at ctl, or nil: a server
// on another host, or in another process.
func local(ctl netip.AddrPort) *Server {
	if s, ok := inProcess.Load(ctl); ok {
		return s.(*Server)
	}
	return nil
}

// addMeter registers a row's placement meter, for the row's OPENs to
// name (meter=<id>.<flow>), until drop is called.
func (s *Server) addMeter(m *peer.Meter) (id int, drop func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.meterID++
	id = s.meterID
	s.meters[id] = m
	return id, func() {
		s.mu.Lock()
		delete(s.meters, id)
		s.mu.Unlock()
	}
}

// flowOpen is what an OPEN asks for: the test, the sizes, the flow
// server's shape, its CPU if pinned, and its Watch in a row's meter.
type flowOpen struct {
	kind     Kind
	req, rsp int
	separate bool
	pin      bool
	cpu      int
	watch    *peer.Watch
}

// parseOpen reads "OPEN crr|rr <req> <rsp> [separate|shared] [cpu=<n>]
// [meter=<id>.<flow>]".
func (s *Server) parseOpen(f []string) (flowOpen, error) {
	o := flowOpen{separate: true}
	kind, err := parseKind(f[1])
	if err != nil {
		return o, err
	}
	o.kind = kind
	req, err1 := strconv.Atoi(f[2])
	rsp, err2 := strconv.Atoi(f[3])
	if err1 != nil || err2 != nil || req < 1 || rsp < 1 || req > maxMessage || rsp > maxMessage {
		return o, fmt.Errorf("sizes %q %q not in 1-%d", f[2], f[3], maxMessage)
	}
	o.req, o.rsp = req, rsp
	for i, w := range f[4:] {
		k, v, _ := strings.Cut(w, "=")
		switch {
		case i == 0 && (w == "separate" || w == "shared"):
			o.separate = w == "separate"
		case k == "cpu" && !o.pin:
			c, err := strconv.Atoi(v)
			if err != nil || c < 0 || c >= cpus.MaxCPU {
				return o, fmt.Errorf("cpu=%q, want a CPU number", v)
			}
			o.pin, o.cpu = true, c
		case k == "meter" && o.watch == nil:
			var id, flow int
			if _, err := fmt.Sscanf(v, "%d.%d", &id, &flow); err != nil {
				return o, fmt.Errorf("meter=%q, want <id>.<flow>", v)
			}
			s.mu.Lock()
			m := s.meters[id]
			s.mu.Unlock()
			if m == nil || flow < 0 || flow >= m.Pairs() {
				return o, fmt.Errorf("meter=%s: no such meter and flow in this server's process", v)
			}
			o.watch = m.Watch(flow, 1)
		case i == 0:
			return o, fmt.Errorf("shape %q, want separate or shared", w)
		default:
			return o, fmt.Errorf("OPEN word %q, want cpu=<n> or meter=<id>.<flow>, once each", w)
		}
	}
	return o, nil
}

// Listen opens a server's control socket on addr (ip:port; port 0 picks
// one).
func Listen(addr netip.AddrPort) (*Server, error) {
	ln, err := net.Listen("tcp", addr.String())
	if err != nil {
		return nil, err
	}
	s := &Server{ln: ln, conns: map[net.Conn]struct{}{}, meters: map[int]*peer.Meter{}}
	inProcess.Store(s.Addr(), s)
	return s, nil
}

// Addr is the control socket's address.
func (s *Server) Addr() netip.AddrPort {
	return s.ln.Addr().(*net.TCPAddr).AddrPort()
}

// Serve accepts control connections until Close.
func (s *Server) Serve() error {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		s.mu.Lock()
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			s.handle(c)
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
			c.Close()
		}()
	}
}

// Close stops accepting, ends every control connection and its flows, and
// waits for their threads.
func (s *Server) Close() error {
	s.closing.Store(true)
	inProcess.Delete(s.Addr())
	err := s.ln.Close()
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return err
}

func (s *Server) handle(c net.Conn) {
	var flows []*flowServer
	defer func() { s.stopFlows(flows) }()
	ip := c.LocalAddr().(*net.TCPAddr).AddrPort().Addr().Unmap()
	r := bufio.NewReader(c)
	w := bufio.NewWriter(c)
	reply := func(format string, args ...any) bool {
		fmt.Fprintf(w, format+"\n", args...)
		return w.Flush() == nil
	}
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		f := strings.Fields(line)
		switch {
		case len(f) >= 4 && f[0] == "OPEN":
			o, err := s.parseOpen(f)
			switch {
			case err != nil:
			case len(flows) >= maxFlows:
				err = fmt.Errorf("more than %d flows", maxFlows)
			}
			var fs *flowServer
			if err == nil {
				n, why := flowFds(o.separate, o.watch != nil)
				if lerr := limits.Fds("one more server flow", n, why); lerr != nil {
					if !reply("%s%v", limitReply, lerr) {
						return
					}
					continue
				}
				fs, err = startFlowServer(ip, o, s.hooks)
			}
			if err != nil {
				if !reply("ERR %v", err) {
					return
				}
				continue
			}
			flows = append(flows, fs)
			s.addLive([]*flowServer{fs}, 1)
			if !reply("OK %d", fs.port) {
				return
			}
		case len(f) == 1 && f[0] == "COUNTS":
			errs := make([]error, len(flows))
			for i, fs := range flows {
				if isDone(fs.done) {
					errs[i] = fs.err
				}
			}
			writeFlows(w, flows, errs)
			if !reply("END") {
				return
			}
		case len(f) == 1 && f[0] == "STOP":
			writeFlows(w, flows, stopFlows(flows, time.Minute))
			s.addLive(flows, -1)
			if s.logf != nil {
				var txns int64
				for _, fs := range flows {
					txns += fs.txns.Load()
				}
				s.logf("netbench server: %v: %d flow(s), %d transactions", c.RemoteAddr(), len(flows), txns)
			}
			releaseFlows(flows)
			flows = nil
			if !reply("END") {
				return
			}
		case len(f) == 1 && f[0] == "SYSCTL":
			for i, v := range readSysctls() {
				fmt.Fprintf(w, "SYSCTL %s %s\n", tcpSysctls[i], v)
			}
			if !reply("END") {
				return
			}
		default:
			if !reply("ERR unknown request %q", strings.TrimSpace(line)) {
				return
			}
		}
	}
}

// writeFlows writes a FLOW line for each flow, with errs[i] its error.
func writeFlows(w *bufio.Writer, flows []*flowServer, errs []error) {
	for i, fs := range flows {
		msg := "-"
		if errs[i] != nil {
			msg = strings.ReplaceAll(errs[i].Error(), "\n", "; ")
		}
		fmt.Fprintf(w, "FLOW %d %d %d %s\n", i, fs.txns.Load(), fs.badReqs.Load(), msg)
	}
}

func releaseFlows(flows []*flowServer) {
	for _, fs := range flows {
		fs.release()
	}
}

// stopFlows ends the flows of a control connection that closed: within a
// minute, or, when the whole server is closing (Ctrl-C on TestServe),
// within a few seconds, after which the process's exit ends any thread
// still blocked.
func (s *Server) stopFlows(flows []*flowServer) {
	wait := time.Minute
	if s.closing.Load() {
		wait = 5 * time.Second
	}
	stopFlows(flows, wait)
	s.addLive(flows, -1)
	releaseFlows(flows)
}

// addLive adds (sign 1) or removes (-1) flows from the live count and
// makes sure each flow thread has a P of its own (see ensureProcs); a
// flow in its own process needs none here.
func (s *Server) addLive(flows []*flowServer, sign int) {
	s.mu.Lock()
	s.live += sign * len(flows)
	for _, fs := range flows {
		if fs.thread {
			s.threads += sign
		}
	}
	threads := s.threads
	s.mu.Unlock()
	if threads > 0 {
		ensureProcs(threads + 2)
	}
}

var procsMu sync.Mutex

// ensureProcs raises GOMAXPROCS to n if it is lower. Every flow thread
// sits in blocking syscalls; with fewer Ps than such threads, a thread
// returning from recv or accept waits for the runtime to take a P back
// from one still blocked (sysmon, 20 us to 10 ms), a delay netperf's
// processes never see. With a P each, only the kernel schedules them.
func ensureProcs(n int) (old int) {
	procsMu.Lock()
	defer procsMu.Unlock()
	old = runtime.GOMAXPROCS(0)
	if n > old {
		runtime.GOMAXPROCS(n)
	}
	return old
}

// restoreProcs sets GOMAXPROCS back to n.
func restoreProcs(n int) {
	procsMu.Lock()
	defer procsMu.Unlock()
	runtime.GOMAXPROCS(n)
}

// flowReport is the server's account of one flow.
type flowReport struct {
	txns, badReqs int64
	err           string // "" if the flow's thread ended cleanly
}

// controlClient is the benchmark's end of a control connection.
type controlClient struct {
	c net.Conn
	r *bufio.Reader
}

// controlTimeout bounds every control exchange; flows stop within it.
const controlTimeout = 2 * time.Minute

func dialControl(addr netip.AddrPort) (*controlClient, error) {
	c, err := net.DialTimeout("tcp", addr.String(), 5*time.Second)
	if err != nil {
		return nil, err
	}
	return &controlClient{c: c, r: bufio.NewReader(c)}, nil
}

func (cc *controlClient) Close() error { return cc.c.Close() }

func (cc *controlClient) roundTrip(req string) (string, error) {
	cc.c.SetDeadline(time.Now().Add(controlTimeout))
	if _, err := fmt.Fprintf(cc.c, "%s\n", req); err != nil {
		return "", err
	}
	return cc.readLine()
}

func (cc *controlClient) readLine() (string, error) {
	line, err := cc.r.ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("control connection: %w", err)
	}
	return strings.TrimSuffix(line, "\n"), nil
}

// limitReply starts the server's refusal of a flow its process has no
// room for (limits.Fds): the client skips the row.
const limitReply = "ERR limit: "

// serverLimit is the server's limitReply: a limit of the server's
// machine, which skips the row.
type serverLimit struct{ msg string }

func (e *serverLimit) Error() string        { return "the netbench server's machine: " + e.msg }
func (e *serverLimit) Is(target error) bool { return target == skip.ErrNotSupported }

// open asks for one flow, its server a process of its own unless shared,
// and returns its data port. extra are OPEN's further words (cpu=,
// meter=).
func (cc *controlClient) open(kind Kind, req, rsp int, shared bool, extra ...string) (int, error) {
	mm := "separate"
	if shared {
		mm = "shared"
	}
	line, err := cc.roundTrip(strings.Join(append([]string{fmt.Sprintf("OPEN %s %d %d %s", kind, req, rsp, mm)}, extra...), " "))
	if err != nil {
		return 0, err
	}
	if msg, ok := strings.CutPrefix(line, limitReply); ok {
		return 0, &serverLimit{msg}
	}
	var port int
	if _, err := fmt.Sscanf(line, "OK %d", &port); err != nil || port < 1 || port > 65535 {
		return 0, fmt.Errorf("server refused a flow: %s", line)
	}
	return port, nil
}

// stop ends the flows and returns the server's counts, one per flow in
// the order they were opened.
func (cc *controlClient) stop() ([]flowReport, error) { return cc.flowReports("STOP") }

// counts returns the server's counts so far, one per flow in the order
// they were opened; the flows run on.
func (cc *controlClient) counts() ([]flowReport, error) { return cc.flowReports("COUNTS") }

func (cc *controlClient) flowReports(verb string) ([]flowReport, error) {
	line, err := cc.roundTrip(verb)
	var out []flowReport
	for ; err == nil && line != "END"; line, err = cc.readLine() {
		r, perr := parseFlowReport(verb, line, len(out))
		if perr != nil {
			return nil, perr
		}
		out = append(out, r)
	}
	return out, err
}

// sysctls asks the server for its tcpSysctls, as name and value pairs.
func (cc *controlClient) sysctls() ([][2]string, error) {
	line, err := cc.roundTrip("SYSCTL")
	var out [][2]string
	for ; err == nil && line != "END"; line, err = cc.readLine() {
		f := strings.SplitN(line, " ", 3)
		if len(f) != 3 || f[0] != "SYSCTL" {
			return nil, fmt.Errorf("server answered SYSCTL with %q", line)
		}
		out = append(out, [2]string{f[1], f[2]})
	}
	return out, err
}

// parseFlowReport reads "FLOW <i> <txns> <badreqs> <error or ->", which
// must be flow i, from the answer to verb.
func parseFlowReport(verb, line string, i int) (flowReport, error) {
	var r flowReport
	f := strings.SplitN(line, " ", 5)
	bad := fmt.Errorf("server answered %s with %q", verb, line)
	if len(f) != 5 || f[0] != "FLOW" || f[1] != strconv.Itoa(i) {
		return r, bad
	}
	var err1, err2 error
	r.txns, err1 = strconv.ParseInt(f[2], 10, 64)
	r.badReqs, err2 = strconv.ParseInt(f[3], 10, 64)
	if err1 != nil || err2 != nil {
		return r, bad
	}
	if f[4] != "-" {
		r.err = f[4]
	}
	return r, nil
}
