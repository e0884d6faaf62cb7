//go:build linux

package netbench

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/child"
	"golang.org/x/sys/unix"
)

type nopTimer struct{}

func (nopTimer) StartTimer() {}
func (nopTimer) StopTimer()  {}
func (nopTimer) ResetTimer() {}

// localServer starts an in-process server on 127.0.0.1 with hooks.
func localServer(t *testing.T, hooks *serverHooks) netip.AddrPort {
	t.Helper()
	srv, err := Listen(netip.MustParseAddrPort("127.0.0.1:0"))
	if err != nil {
		t.Fatal(err)
	}
	srv.hooks = hooks
	go srv.Serve()
	t.Cleanup(func() { srv.Close() })
	return srv.Addr()
}

func TestPortWalkFollowsNetperf(t *testing.T) {
	// Range 5000-5004 uses 5000..5003 (netperf wraps on reaching max);
	// the server's port 5002 is skipped.
	w, err := newPortWalker(5000, 5004, 5001, 5002)
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for range 7 {
		got = append(got, w.Next())
	}
	want := []int{5001, 5003, 5000, 5001, 5003, 5000, 5001}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("walk %v, want %v", got, want)
	}
	if w.Span() != 4 {
		t.Fatalf("span %d, want 4", w.Span())
	}
	for _, bad := range [][4]int{{0, 10, 1, 0}, {10, 10, 10, 0}, {5000, 70000, 5000, 0}, {5000, 6000, 6000, 0}, {5000, 6000, 4999, 0}} {
		if _, err := newPortWalker(bad[0], bad[1], bad[2], bad[3]); err == nil {
			t.Errorf("newPortWalker%v accepted", bad)
		}
	}
}

// TestPortWalkSkipsBusyPorts walks a range of four ports, one of them held
// by a listening socket: bind fails with EADDRINUSE there and the client
// takes the next port, as netperf does, and every transaction completes.
func TestPortWalkSkipsBusyPorts(t *testing.T) {
	lfd, busy, err := listenSocket(netip.MustParseAddr("127.0.0.1"))
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(lfd)
	if busy+4 > 65535 {
		t.Skipf("ephemeral port %d too close to the top", busy)
	}
	ctl := localServer(t, nil)
	res, err := runFlows(ctl, Config{Kind: CRR, Flows: 1, Req: 1, Rsp: 1}, 20, nopTimer{}, portRange{busy, busy + 4})
	if err != nil {
		t.Fatal(err)
	}
	// 20 transactions over three usable ports pass the busy one at least
	// six times.
	if res.Skips < 6 || res.Txns != 20 {
		t.Fatalf("%d transactions, %d ports refused; want 20 and >= 6", res.Txns, res.Skips)
	}
}

// TestTimeWaitOnServerNeverFails reuses two client ports for 200
// connections: every connection's TIME_WAIT lands on the server side (the
// server closes first), the client binds the same ports again and again,
// and the run passes its checks.
func TestTimeWaitOnServerNeverFails(t *testing.T) {
	lo := 20000 + os.Getpid()%20000
	ctl := localServer(t, nil)
	overflowBefore, overflowErr := timeWaitOverflows()
	res, err := runFlows(ctl, Config{Kind: CRR, Flows: 1, Req: 1, Rsp: 1}, 200, nopTimer{}, portRange{lo, lo + 2})
	if err != nil {
		t.Fatal(err)
	}
	if res.Txns != 200 {
		t.Fatalf("%d transactions, want 200", res.Txns)
	}
	// The last connections' FINs may still be in flight on a loaded
	// machine: wait, briefly, for the server side to reach TIME_WAIT.
	var server, client int
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var err error
		server, client, err = timeWait(res.Ports[0], lo, lo+2)
		if err != nil {
			t.Skipf("cannot read TIME_WAIT sockets: %v", err)
		}
		if server > 0 || client > 0 || time.Now().After(deadline) {
			break
		}
	}
	if server == 0 && client == 0 && overflowErr == nil {
		if after, err := timeWaitOverflows(); err == nil && after > overflowBefore {
			t.Skipf("the kernel kept no TIME_WAIT for %d sockets during the run (TcpExt TCPTimeWaitOverflow: net.ipv4.tcp_max_tw_buckets reached; earlier TCP_CRR runs fill it and it drains 60 s after they end)", after-overflowBefore)
		}
	}
	if server == 0 || client != 0 {
		t.Fatalf("TIME_WAIT sockets: %d on the server's port %d, %d on client ports %d-%d; want them all on the server side", server, res.Ports[0], client, lo, lo+1)
	}
	t.Logf("%d transactions on 2 client ports: %d TIME_WAIT on the server side, %d slow, %d ports refused", res.Txns, server, res.Slow, res.Skips)
}

// timeWait counts the TIME_WAIT sockets in /proc/net/tcp between the
// server port and client ports [lo, hi), by which side holds them.
func timeWait(serverPort, lo, hi int) (server, client int, err error) {
	f, err := os.Open("/proc/net/tcp")
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fld := strings.Fields(sc.Text())
		if len(fld) < 4 || fld[3] != "06" { // TCP_TIME_WAIT
			continue
		}
		lp, rp := hexPort(fld[1]), hexPort(fld[2])
		switch {
		case lp == serverPort && rp >= lo && rp < hi:
			server++
		case rp == serverPort && lp >= lo && lp < hi:
			client++
		}
	}
	return server, client, sc.Err()
}

// timeWaitOverflows is the kernel's count of sockets it closed without
// keeping them in TIME_WAIT because net.ipv4.tcp_max_tw_buckets was
// reached (TcpExt TCPTimeWaitOverflow in /proc/net/netstat).
func timeWaitOverflows() (int64, error) {
	b, err := os.ReadFile("/proc/net/netstat")
	if err != nil {
		return 0, err
	}
	lines := strings.Split(string(b), "\n")
	for i := 0; i+1 < len(lines); i++ {
		names, vals := strings.Fields(lines[i]), strings.Fields(lines[i+1])
		if len(names) == 0 || names[0] != "TcpExt:" || len(vals) != len(names) {
			continue
		}
		for j, n := range names {
			if n == "TCPTimeWaitOverflow" {
				return strconv.ParseInt(vals[j], 10, 64)
			}
		}
	}
	return 0, errors.New("no TcpExt TCPTimeWaitOverflow in /proc/net/netstat")
}

func hexPort(addr string) int {
	_, p, _ := strings.Cut(addr, ":")
	n, _ := strconv.ParseInt(p, 16, 32)
	return int(n)
}

// TestCountsMatch runs both kinds with several flows, as processes and
// as threads, and checks that the two ends counted every transaction,
// flow by flow.
func TestCountsMatch(t *testing.T) {
	ctl := localServer(t, nil)
	for _, kind := range []Kind{CRR, RR} {
		for _, shared := range []bool{false, true} {
			res, err := runFlows(ctl, Config{Kind: kind, Flows: 4, Req: 64, Rsp: 1024, Shared: shared}, 401, nopTimer{}, netperfPorts)
			if err != nil {
				t.Fatalf("%v shared=%v: %v", kind, shared, err)
			}
			var client, server int64
			for i := range res.Client {
				client += res.Client[i]
				server += res.Server[i].txns
			}
			if client != 401 || server != 401 || len(res.Lat) != 26 || res.Lat[0] <= 0 {
				t.Fatalf("%v shared=%v: clients %d, server %d, %d latencies from %d ns; want 401, 401 and 26 (one in %d)", kind, shared, client, server, len(res.Lat), res.Lat[0], LatEvery)
			}
		}
	}
}

// TestRoundsKeepFlows runs rounds of several sizes on one set of flows,
// as a row's trials do: every round's counts match flow by flow (the
// server's COUNTS, less the last round's), the client processes are the
// same throughout, and an RR flow's one connection serves every round
// (its server flow serves one connection and then ends).
func TestRoundsKeepFlows(t *testing.T) {
	ctl := localServer(t, nil)
	for _, kind := range []Kind{CRR, RR} {
		for _, shared := range []bool{false, true} {
			cfg := Config{Kind: kind, Flows: 3, Req: 1, Rsp: 1, Shared: shared}
			fl, err := startFlows(ctl, cfg, netperfPorts, nil)
			if err != nil {
				t.Fatal(err)
			}
			var pids []int
			for _, n := range []int{1, 100, 1000, 10} {
				res, err := fl.round(n, nopTimer{})
				if err != nil {
					fl.close()
					t.Fatalf("%v shared=%v, round of %d: %v", kind, shared, n, err)
				}
				var server int64
				for _, r := range res.Server {
					server += r.txns
				}
				if res.Txns != int64(n) || server != int64(n) || len(res.Lat) != latSlots(n) {
					t.Errorf("%v shared=%v, round of %d: clients %d, server %d, %d latencies", kind, shared, n, res.Txns, server, len(res.Lat))
				}
				now := fl.run.Pids()
				if pids != nil && fmt.Sprint(now) != fmt.Sprint(pids) {
					t.Errorf("%v shared=%v: client processes %v, then %v", kind, shared, pids, now)
				}
				pids = now
			}
			if err := fl.close(); err != nil {
				t.Fatalf("%v shared=%v: %v", kind, shared, err)
			}
			if len(pids) != map[bool]int{false: 3, true: 0}[shared] {
				t.Errorf("%v shared=%v: client processes %v", kind, shared, pids)
			}
			var total int64
			for _, r := range fl.final {
				total += r.txns
			}
			if total != 1111 {
				t.Errorf("%v shared=%v: server's final count %d, want 1111", kind, shared, total)
			}
		}
	}
}

// TestSharedRoundsHaveTheirPs: every round of mm=shared flows runs with
// a P for each flow thread, though the testing package sets GOMAXPROCS
// back after a row's first trial, and leaves GOMAXPROCS as it found it.
func TestSharedRoundsHaveTheirPs(t *testing.T) {
	ctl := localServer(t, nil)
	cfg := Config{Kind: RR, Flows: 3, Req: 1, Rsp: 1, Shared: true}
	before := runtime.GOMAXPROCS(0)
	fl, err := startFlows(ctl, cfg, netperfPorts, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer fl.close()
	for round := range 2 {
		runtime.GOMAXPROCS(1) // as testing's -cpu value might be
		var during int
		if _, err := fl.round(10, timerFunc{start: func() { during = runtime.GOMAXPROCS(0) }}); err != nil {
			t.Fatal(err)
		}
		if after := runtime.GOMAXPROCS(0); during < 2*cfg.Flows+2 || after != 1 {
			t.Errorf("round %d: GOMAXPROCS %d in the round, %d after; want >= %d, then 1", round, during, after, 2*cfg.Flows+2)
		}
	}
	runtime.GOMAXPROCS(before)
}

// TestLaterRoundChecked makes the server leave out a transaction of the
// second round: that round fails naming both counts of the round.
func TestLaterRoundChecked(t *testing.T) {
	for _, kind := range []Kind{CRR, RR} {
		ctl := localServer(t, &serverHooks{uncounted: func(n int64) bool { return n == 150 }})
		fl, err := startFlows(ctl, Config{Kind: kind, Flows: 1, Req: 1, Rsp: 1}, netperfPorts, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fl.round(100, nopTimer{}); err != nil {
			t.Fatalf("%v: round 1: %v", kind, err)
		}
		_, err = fl.round(100, nopTimer{})
		if err == nil || !strings.Contains(err.Error(), "client completed 100 transactions, server answered 99") {
			t.Errorf("%v: round 2 with a miscounting server: %v", kind, err)
		}
		if err := fl.close(); err != nil {
			t.Error(err)
		}
	}
}

// TestServerCountMismatchFails makes the server leave one transaction out
// of its count; the run must fail and name both counts.
func TestServerCountMismatchFails(t *testing.T) {
	for _, kind := range []Kind{CRR, RR} {
		ctl := localServer(t, &serverHooks{uncounted: func(n int64) bool { return n == 3 }})
		_, err := runFlows(ctl, Config{Kind: kind, Flows: 1, Req: 1, Rsp: 1}, 10, nopTimer{}, netperfPorts)
		if err == nil || !strings.Contains(err.Error(), "client completed 10 transactions, server answered 9") {
			t.Fatalf("%v: run with a miscounting server: %v", kind, err)
		}
	}
}

// TestResponseBytesChecked corrupts one byte of one response, the last of
// a large one; the client must stop the run and name the byte.
func TestResponseBytesChecked(t *testing.T) {
	for _, kind := range []Kind{CRR, RR} {
		for _, sz := range []int{1, 1024} {
			corrupt := func(n int64, rsp []byte) []byte {
				if n != 5 {
					return rsp
				}
				bad := append([]byte(nil), rsp...)
				bad[len(bad)-1] ^= 0x40
				return bad
			}
			ctl := localServer(t, &serverHooks{response: corrupt})
			_, err := runFlows(ctl, Config{Kind: kind, Flows: 1, Req: 1, Rsp: sz}, 10, nopTimer{}, netperfPorts)
			want := fmt.Sprintf("byte %d of %d", sz-1, sz)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("%v rsp=%d: corrupted response gave %v, want %q", kind, sz, err, want)
			}
		}
	}
}

// TestBadRequestCounted sends a request with a wrong byte straight to a
// flow; the server counts it and the count check fails.
func TestBadRequestCounted(t *testing.T) {
	ctl := localServer(t, nil)
	cc, err := dialControl(ctl)
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	port, err := cc.open(CRR, 4, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	f := newClientFlow(CRR, newPatterns(4, 1), ctl.Addr(), port, nil)
	f.pat.req[0] = []byte{0, 1, 2, 3} // tag 0's request is 0, 31, 62, 93
	if err := f.rrOpen(); err != nil {
		t.Fatal(err)
	}
	if err := f.exchange(f.fd, 0); err != nil {
		t.Fatal(err)
	}
	unix.Close(f.fd)
	reports, err := cc.stop()
	if err != nil {
		t.Fatal(err)
	}
	if len(reports) != 1 || reports[0].badReqs != 1 || reports[0].txns != 1 {
		t.Fatalf("server reports %+v, want one transaction with one bad request", reports)
	}
	if err := checkCounts([]int64{1}, reports); err == nil || !strings.Contains(err.Error(), "1 request(s) with a wrong byte") {
		t.Fatalf("checkCounts: %v", err)
	}
}

func TestCheckCounts(t *testing.T) {
	ok := []flowReport{{txns: 5}, {txns: 7}}
	if err := checkCounts([]int64{5, 7}, ok); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		client []int64
		server []flowReport
		want   string
	}{
		{[]int64{5}, ok, "server reported 2 flows, clients ran 1"},
		{[]int64{5, 8}, ok, "flow 1: client completed 8 transactions, server answered 7"},
		{[]int64{5, 7}, []flowReport{{txns: 5}, {txns: 7, err: "recv: ECONNRESET"}}, "flow 1: server: recv: ECONNRESET"},
	} {
		if err := checkCounts(tc.client, tc.server); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("checkCounts(%v, %+v) = %v, want %q", tc.client, tc.server, err, tc.want)
		}
	}
}

func TestCheckRetrans(t *testing.T) {
	if err := checkRetrans(10, 1000); err != nil {
		t.Fatalf("1%% retransmitted failed: %v", err)
	}
	if err := checkRetrans(11, 1000); err == nil || !strings.Contains(err.Error(), "retransmitted 11 SYNs during 1000 transactions") {
		t.Fatalf("1.1%% retransmitted: %v", err)
	}
}

// TestSlowTransactionsCounted delays one timed response (one flow: the
// server's n is the client's ticket) past SlowAfter and one untimed one:
// the timed one is counted as slow in every run, the untimed one is not,
// and no run fails for it, however few transactions it has: slowness is
// evidence, retransmitted SYNs are what fail a run.
func TestSlowTransactionsCounted(t *testing.T) {
	delay := &serverHooks{delay: func(n int64) time.Duration {
		if n == 2*LatEvery || n == 2*LatEvery+1 {
			return SlowAfter + 50*time.Millisecond
		}
		return 0
	}}
	res, err := runFlows(localServer(t, delay), Config{Kind: CRR, Flows: 1, Req: 1, Rsp: 1}, 50, nopTimer{}, netperfPorts)
	if err != nil || res.Slow != 1 {
		t.Fatalf("one slow of 50: slow=%d, err=%v", res.Slow, err)
	}
	if want := 1 / float64(latSlots(50)); res.SlowShare() != want {
		t.Fatalf("slow share %v, want %v", res.SlowShare(), want)
	}
	res, err = runFlows(localServer(t, delay), Config{Kind: RR, Flows: 1, Req: 1, Rsp: 1}, 200, nopTimer{}, netperfPorts)
	if err != nil || res.Slow != 1 {
		t.Fatalf("one slow of 200: slow=%d, err=%v", res.Slow, err)
	}
	if p := res.Percentile(100); p < SlowAfter {
		t.Fatalf("slowest transaction %v, want > %v", p, SlowAfter)
	}
}

// TestRetransmitsFailRun runs a row while the netstat file it reads says
// the kernel retransmitted SYNs: the check fires with the count.
func TestRetransmitsFailRun(t *testing.T) {
	dir := t.TempDir()
	orig := netstatPath
	t.Cleanup(func() { netstatPath = orig })
	netstatPath = filepath.Join(dir, "netstat")
	// The file's count grows by 3 between the two reads of one run.
	writeNetstat := func(v int64) {
		data := fmt.Sprintf("TcpExt: SyncookiesSent TCPSynRetrans\nTcpExt: 0 %d\nIpExt: InNoRoutes\nIpExt: 0\n", v)
		if err := os.WriteFile(netstatPath, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeNetstat(100)
	hooks := &serverHooks{delay: func(n int64) time.Duration {
		if n == 1 {
			writeNetstat(103)
		}
		return 0
	}}
	res, err := runFlows(localServer(t, hooks), Config{Kind: CRR, Flows: 1, Req: 1, Rsp: 1}, 100, nopTimer{}, netperfPorts)
	if err == nil || !strings.Contains(err.Error(), "retransmitted 3 SYNs during 100 transactions (3.00%)") || res.SynRetrans != 3 {
		t.Fatalf("3 retransmits in 100: err=%v", err)
	}
}

// TestSynRetransCounter reads the real counter around a connect whose SYN
// the kernel must retransmit: to a listener whose accept queue is full, so
// that the kernel drops the SYN and the client sends it again after 1 s.
func TestSynRetransCounter(t *testing.T) {
	if _, err := synRetrans("testdata/netstat-6.18"); err != nil {
		t.Fatalf("fixture: %v", err)
	}
	if _, err := synRetrans("testdata/nonexistent"); err == nil {
		t.Fatal("a missing file read without error")
	}
	ln, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(ln)
	if err := unix.Bind(ln, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	// Backlog 0: the accept queue holds one connection; nothing accepts.
	if err := unix.Listen(ln, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := unix.Getsockname(ln)
	if err != nil {
		t.Fatal(err)
	}
	before, err := synRetrans(netstatPath)
	if err != nil {
		t.Fatal(err)
	}
	var fds []int
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	for range 3 {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		fds = append(fds, fd)
		if err := unix.Connect(fd, sa); err != nil && err != unix.EINPROGRESS {
			t.Fatal(err)
		}
	}
	// The first SYN retransmit comes after the initial RTO, 1 s; wait
	// for it as long as it takes.
	for {
		after, err := synRetrans(netstatPath)
		if err != nil {
			t.Fatal(err)
		}
		if after > before {
			t.Logf("TCPSynRetrans %d -> %d", before, after)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestPercentile(t *testing.T) {
	r := &Result{Lat: []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}}
	for p, want := range map[float64]time.Duration{50: 5, 99: 10, 10: 1, 100: 10} {
		if got := r.Percentile(p); got != want {
			t.Errorf("p%v = %v, want %v", p, got, want)
		}
	}
}

// TestControlRejectsBadRequests checks the server's answers to nonsense.
func TestControlRejectsBadRequests(t *testing.T) {
	cc, err := dialControl(localServer(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	for req, want := range map[string]string{
		"OPEN udp 1 1":       "ERR unknown test",
		"OPEN crr 0 1":       "ERR sizes",
		"OPEN rr 1 99999999": "ERR sizes",
		"HELLO":              "ERR unknown request",
		// cpu= and meter= words (placement)
		"OPEN rr 1 1 separate cpu=x":     "ERR cpu=\"x\", want a CPU number",
		"OPEN rr 1 1 cpu=-1":             "ERR cpu=\"-1\"",
		"OPEN rr 1 1 shared meter=9.0":   "ERR meter=9.0: no such meter",
		"OPEN rr 1 1 shared cpu=0 cpu=0": "ERR OPEN word \"cpu=0\"",
		"OPEN rr 1 1 both":               "ERR shape \"both\"",
	} {
		line, err := cc.roundTrip(req)
		if err != nil || !strings.HasPrefix(line, want) {
			t.Errorf("%q: %q, %v; want %q", req, line, err, want)
		}
	}
	if _, err := cc.open(CRR, 0, 1, false); err == nil {
		t.Error("open with size 0 succeeded")
	}
}

// TestNoServer names the address when no server answers.
func TestNoServer(t *testing.T) {
	lfd, port, err := listenSocket(netip.MustParseAddr("127.0.0.1"))
	if err != nil {
		t.Fatal(err)
	}
	unix.Close(lfd) // a port nobody listens on now
	ctl := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(port))
	_, err = runFlows(ctl, Config{Kind: CRR, Flows: 1, Req: 1, Rsp: 1}, 1, nopTimer{}, netperfPorts)
	if err == nil || !strings.Contains(err.Error(), "no netbench server at "+ctl.String()) || !errors.Is(err, unix.ECONNREFUSED) {
		t.Fatalf("run against %v: %v", ctl, err)
	}
}

// TestNoLeaks checks that runs and a server leave no fd behind.
func TestNoLeaks(t *testing.T) {
	before := countFDs(t)
	srv, err := Listen(netip.MustParseAddrPort("127.0.0.1:0"))
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	for _, kind := range []Kind{CRR, RR} {
		for _, shared := range []bool{false, true} {
			if _, err := runFlows(srv.Addr(), Config{Kind: kind, Flows: 3, Req: 1, Rsp: 1, Shared: shared}, 30, nopTimer{}, netperfPorts); err != nil {
				t.Fatal(err)
			}
		}
	}
	srv.Close()
	if after := countFDs(t); after != before {
		t.Fatalf("%d open fds before, %d after", before, after)
	}
	if kids := childPids(t); len(kids) != 0 {
		t.Fatalf("child processes left after the runs and the server's close: %v", kids)
	}
}

func countFDs(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip(err)
	}
	return len(ents)
}

func TestValidAddrPort(t *testing.T) {
	for s, ok := range map[string]bool{"10.0.0.1:12865": true, "[fd00::1]:1": true, "host:12865": false, "10.0.0.1": false, "10.0.0.1:0": false} {
		if err := validAddrPort(s); (err == nil) != ok {
			t.Errorf("validAddrPort(%q) = %v", s, err)
		}
	}
}

// TestFlowFdTablesPrivate looks at the fd tables from the server's flow
// thread in the middle of a transaction: the thread's table holds its
// listening socket and the accepted one and no other socket (its copy of
// the process's sockets was swept); the accepted socket is not in the
// process's table; and the client's end of the connection, which lives in
// the client thread's own table, is in neither.
func TestFlowFdTablesPrivate(t *testing.T) {
	if err := privateFiles(); err != nil {
		t.Skipf("flows share the process's fd table here: %v", err)
	}
	var own, self map[string]string
	var client string
	var seen error
	hooks := &serverHooks{delay: func(n int64) time.Duration {
		if n == 0 {
			if own, seen = fdLinks("/proc/thread-self/fd"); seen == nil {
				self, seen = fdLinks("/proc/self/fd")
			}
			for _, l := range own {
				if strings.HasPrefix(l, "socket:") && !slices.Contains(slices.Collect(maps.Values(self)), l) {
					client = peerSocket(l)
				}
			}
		}
		return 0
	}}
	for _, kind := range []Kind{CRR, RR} {
		own, self, client, seen = nil, nil, "", nil
		srv, err := Listen(netip.MustParseAddrPort("127.0.0.1:0"))
		if err != nil {
			t.Fatal(err)
		}
		srv.hooks = hooks
		go srv.Serve()
		// 200 transactions: the first one's look at the tables (reading
		// /proc/net/tcp, long when TIME_WAIT is full) may make it slow,
		// which must stay under the 1% that fails a run.
		_, err = runFlows(srv.Addr(), Config{Kind: kind, Flows: 1, Req: 1, Rsp: 1}, 200, nopTimer{}, netperfPorts)
		srv.Close()
		if err != nil {
			t.Fatal(err)
		}
		if seen != nil {
			t.Fatal(seen)
		}
		var sockets, onlyThread []string
		for _, l := range own {
			if strings.HasPrefix(l, "socket:") {
				sockets = append(sockets, l)
				if !slices.Contains(slices.Collect(maps.Values(self)), l) {
					onlyThread = append(onlyThread, l)
				}
			}
		}
		if len(sockets) != 2 || len(onlyThread) != 1 {
			t.Errorf("%v: server thread's sockets %v, of them %v not in the process's table; want its listening socket and, only in its table, the accepted one", kind, sockets, onlyThread)
		}
		if client == "" {
			t.Errorf("%v: the accepted socket's peer not found in /proc/net/tcp", kind)
		} else if slices.Contains(slices.Collect(maps.Values(self)), client) || slices.Contains(slices.Collect(maps.Values(own)), client) {
			t.Errorf("%v: the client's socket %s is in the process's or the server thread's table, want only the client thread's", kind, client)
		}
	}
}

// peerSocket returns the "socket:[inode]" link of the other end of the
// loopback TCP connection whose socket link is l, from /proc/net/tcp; ""
// if not found.
func peerSocket(l string) string {
	inode := strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")
	b, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return ""
	}
	var rows [][]string
	var local, remote string
	for _, line := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 10 {
			continue
		}
		rows = append(rows, f)
		if f[9] == inode {
			local, remote = f[1], f[2]
		}
	}
	for _, f := range rows {
		if local != "" && f[1] == remote && f[2] == local {
			return "socket:[" + f[9] + "]"
		}
	}
	return ""
}

// fdLinks maps each fd in dir to what it links to.
func fdLinks(dir string) (map[string]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for _, e := range ents {
		if l, err := os.Readlink(dir + "/" + e.Name()); err == nil {
			m[e.Name()] = l
		}
	}
	return m, nil
}

// TestServerThreadFailureEndsRun makes every flow's server thread fail
// before its first accept: the clients must get an error naming it, not
// wait in the listen backlog for an accept that never comes.
func TestServerThreadFailureEndsRun(t *testing.T) {
	hooks := &serverHooks{start: func() error { return errors.New("injected start failure") }}
	for _, kind := range []Kind{CRR, RR} {
		done := make(chan error, 1)
		go func() {
			_, err := runFlows(localServer(t, hooks), Config{Kind: kind, Flows: 2, Req: 1, Rsp: 1}, 10, nopTimer{}, netperfPorts)
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "injected start failure") {
				t.Errorf("%v: run with failed server threads: %v, want the threads' error", kind, err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%v: run still waiting 30s after its server threads failed", kind)
		}
	}
}

// TestServerSysctls asks an in-process server for its TCP settings over
// the control connection: the same machine, so the same values as read
// here, and the fingerprint's remote fields carry them under the server's
// key.
func TestServerSysctls(t *testing.T) {
	ctl := localServer(t, nil)
	cc, err := dialControl(ctl)
	if err != nil {
		t.Fatal(err)
	}
	got, err := cc.sysctls()
	cc.Close()
	if err != nil {
		t.Fatal(err)
	}
	want := readSysctls()
	if len(got) != len(tcpSysctls) {
		t.Fatalf("server sent %d settings %v, want %d", len(got), got, len(tcpSysctls))
	}
	for i, kv := range got {
		if kv[0] != tcpSysctls[i] || kv[1] != want[i] {
			t.Errorf("setting %d: server says %s = %q, here %s = %q", i, kv[0], kv[1], tcpSysctls[i], want[i])
		}
	}
	fields := remoteSysctls(ctl)
	if len(fields) != len(tcpSysctls) || fields[0].Key != "netbench.server.sysctl."+tcpSysctls[0] || fields[0].Value != want[0] {
		t.Errorf("fingerprint fields %v", fields)
	}
	if f := remoteSysctls(netip.MustParseAddrPort("127.0.0.1:1")); len(f) != 1 || !strings.Contains(f[0].Value, "not read") {
		t.Errorf("fields for a server that is not there: %v", f)
	}
}

// TestSharedFdTablesWhereUnshareRefused plays a machine whose seccomp
// profile refuses unshare: flows run on the shared table, and the
// fingerprint says so with the reason.
func TestSharedFdTablesWhereUnshareRefused(t *testing.T) {
	saved := privateFiles
	t.Cleanup(func() { privateFiles = saved })
	privateFiles = func() error { return fmt.Errorf("unshare(CLONE_FILES): %w", unix.EPERM) }
	if got := fdTables(); !strings.HasPrefix(got, "shared by the flow threads") || !strings.Contains(got, "operation not permitted") {
		t.Errorf("fdTables() = %q", got)
	}
	// The server thread opens /dev/null and leaves it open: on a shared
	// table it outlives the thread, in the process's table.
	fd := -1
	hooks := &serverHooks{start: func() (err error) {
		fd, err = unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		return err
	}}
	if _, err := runFlows(localServer(t, hooks), Config{Kind: CRR, Flows: 1, Req: 1, Rsp: 1}, 3, nopTimer{}, netperfPorts); err != nil {
		t.Fatal(err)
	}
	l, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd))
	if err != nil || l != "/dev/null" {
		t.Fatalf("fd %d the server thread opened: %q, %v in the process's table, want /dev/null: the flow unshared its table anyway", fd, l, err)
	}
	unix.Close(fd)
}

// TestControlCloseStopsFlows closes a control connection without STOP:
// the server ends its flows (their threads' fd tables must not keep the
// connection open, or the server would never see it close).
func TestControlCloseStopsFlows(t *testing.T) {
	srv, err := Listen(netip.MustParseAddrPort("127.0.0.1:0"))
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	defer srv.Close()
	cc, err := dialControl(srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []Kind{CRR, RR} {
		if _, err := cc.open(kind, 1, 1, false); err != nil {
			t.Fatal(err)
		}
	}
	cc.Close()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		srv.mu.Lock()
		live := srv.live
		srv.mu.Unlock()
		if live == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d flow(s) still running 10s after their control connection closed", live)
		}
	}
}

// TestServerCloseWithIdleClient closes the server while a client holds an
// RR connection open and sends nothing: Close returns within its few
// seconds' grace, and the client's control connection sees the server go.
func TestServerCloseWithIdleClient(t *testing.T) {
	srv, err := Listen(netip.MustParseAddrPort("127.0.0.1:0"))
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	cc, err := dialControl(srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	port, err := cc.open(RR, 1, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	f := newClientFlow(RR, newPatterns(1, 1), srv.Addr().Addr(), port, nil)
	if err := f.rrOpen(); err != nil {
		t.Fatal(err)
	}
	// Closing the client's socket at the end lets the blocked flow
	// thread go.
	defer unix.Close(f.fd)
	// One exchange, so the flow thread has accepted and waits in recv.
	if err := f.exchange(f.fd, 0); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	srv.Close()
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("Close took %v with an idle RR client", d)
	}
	cc.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := cc.r.ReadString('\n'); !errors.Is(err, io.EOF) {
		t.Errorf("client's control connection after the server closed: %v, want EOF", err)
	}
}

// childPids lists this process's children from /proc.
func childPids(t *testing.T) []int {
	t.Helper()
	pids, err := child.Children()
	if err != nil {
		t.Fatal(err)
	}
	return pids
}

// TestKilledClientFailsRun kills a client flow's process in the middle
// of a run: the run fails naming it, and no process is left.
func TestKilledClientFailsRun(t *testing.T) {
	ctl := localServer(t, nil)
	kill := timerFunc{start: func() {
		go func() {
			time.Sleep(50 * time.Millisecond)
			pids, err := child.Children() // not childPids: no t.Fatal off the test's goroutine
			for _, pid := range pids {
				if cmdline(pid) == "netbench-client" {
					unix.Kill(pid, unix.SIGKILL)
					return
				}
			}
			t.Errorf("no netbench-client process to kill among %v (%v)", pids, err)
		}()
	}}
	_, err := runFlows(ctl, Config{Kind: RR, Flows: 2, Req: 1, Rsp: 1}, 1<<22, kill, netperfPorts)
	if err == nil || !strings.Contains(err.Error(), "child netbench-client") || !strings.Contains(err.Error(), "SIGKILL") {
		t.Fatalf("run with a killed client: %v, want an error naming the client and SIGKILL", err)
	}
	t.Log(err)
	// The server flows end with the control connection.
	for deadline := time.Now().Add(10 * time.Second); len(childPids(t)) != 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("processes left 10 s after the failed run: %v", childPids(t))
		}
	}
}

// cmdline returns the role a kbench child names in its argv[0].
func cmdline(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	s := string(b)
	if i := strings.Index(s, "[kbench child "); i >= 0 {
		return strings.TrimSuffix(strings.SplitN(s[i+len("[kbench child "):], "]", 2)[0], "")
	}
	return ""
}

type timerFunc struct{ start func() }

func (f timerFunc) StartTimer() { f.start() }
func (timerFunc) StopTimer()    {}
func (timerFunc) ResetTimer()   {}
