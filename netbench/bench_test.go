//go:build linux

package netbench

import (
	"fmt"
	"net/netip"
	"os"
	"slices"
	"testing"

	"github.com/kbench/kbench/internal/benchmain"
	"github.com/kbench/kbench/internal/fingerprint"
	"github.com/kbench/kbench/internal/peer"
	"github.com/kbench/kbench/internal/region"
	"github.com/kbench/kbench/internal/rounds"
	"github.com/kbench/kbench/internal/skip"
	"github.com/kbench/kbench/internal/unit"
	"golang.org/x/sys/unix"
)

func TestMain(m *testing.M) { os.Exit(benchmain.Main(m, fingerprintFields)) }

// fingerprintFields records where the server runs and the TCP settings
// that change a TCP_CRR result: this machine's, and in remote mode the
// server's, where TIME_WAIT piles up.
func fingerprintFields() []fingerprint.Field {
	where := "in-process on loopback"
	if *serverAddr != "" {
		where = "remote " + *serverAddr
	}
	fields := []fingerprint.Field{{Key: "netbench.server", Value: where}, {Key: "netbench.fdtables", Value: fdTables()}, peer.Fingerprint()}
	for i, v := range readSysctls() {
		fields = append(fields, fingerprint.Field{Key: "sysctl." + tcpSysctls[i], Value: v})
	}
	if ctl, err := netip.ParseAddrPort(*serverAddr); err == nil {
		fields = append(fields, remoteSysctls(ctl)...)
	}
	return fields
}

// remoteSysctls asks the netbench server at ctl for its TCP settings; a
// server it cannot ask gets one field saying why.
func remoteSysctls(ctl netip.AddrPort) []fingerprint.Field {
	var out [][2]string
	cc, err := dialControl(ctl)
	if err == nil {
		out, err = cc.sysctls()
		cc.Close()
	}
	if err != nil {
		return []fingerprint.Field{{Key: "netbench.server.sysctl", Value: "(not read: " + err.Error() + ")"}}
	}
	fields := make([]fingerprint.Field, len(out))
	for i, kv := range out {
		fields[i] = fingerprint.Field{Key: "netbench.server.sysctl." + kv[0], Value: kv[1]}
	}
	return fields
}

// sizes are the request/response sizes of each row: netperf's default of
// one byte each way (lkp's report), and a larger exchange.
var sizes = []struct{ req, rsp int }{{1, 1}, {64, 1024}}

// BenchmarkTCPCRR is netperf TCP_CRR: one op is one connect, request,
// response, close.
func BenchmarkTCPCRR(b *testing.B) { benchKind(b, CRR) }

// BenchmarkTCPRR is netperf TCP_RR: one op is one request and response on
// a persistent connection.
func BenchmarkTCPRR(b *testing.B) { benchKind(b, RR) }

func benchKind(b *testing.B, kind Kind) {
	for _, ip := range []int{4, 6} {
		for _, nflows := range *flowCounts {
			for _, sz := range sizes {
				for _, mm := range []string{"separate", "shared"} {
					for _, cpu := range peer.Placements {
						cfg := Config{Kind: kind, Flows: nflows, Req: sz.req, Rsp: sz.rsp, Shared: mm == "shared", CPU: cpu}
						if cfg.Shared && !sharedRow(ip, cfg) || cpu != peer.Any && !pinnedRow(ip, cfg) {
							continue
						}
						// The row's flows and its in-process server are
						// set up by its first trial and kept for the rest.
						var kept peer.Kept[*flows]
						name := fmt.Sprintf("ip=%d/flows=%d/req=%d/rsp=%d/mm=%s/cpu=%s", ip, nflows, sz.req, sz.rsp, mm, cpu)
						b.Run(name, func(b *testing.B) { benchRow(b, ip, cfg, &kept) })
						if err := kept.Close(); err != nil {
							b.Errorf("%s: ending the row's flows: %v", name, err)
						}
					}
				}
			}
		}
	}
}

// sharedRow says which rows also run with mm=shared (flows as threads):
// see the package doc.
func sharedRow(ip int, cfg Config) bool {
	return ip == 4 && cfg.Req == 1
}

// pinnedRow says which rows also run with cpu=same and cpu=cross: the
// report's shape (ip=4, req=1, mm=separate), see the package doc.
func pinnedRow(ip int, cfg Config) bool {
	return ip == 4 && cfg.Req == 1 && !cfg.Shared
}

// benchRow runs one -count of a row: timed rounds (internal/rounds) on
// the row's kept flows, which the first round starts after checking the
// limits (later ones find the flows' fds and tasks taken already).
func benchRow(b *testing.B, ip int, cfg Config, kept *peer.Kept[*flows]) {
	r := region.New(b)
	res := &Result{}
	ops, err := rounds.Loop(b, r, func(n int64) (int64, error) {
		_, err := kept.Get(fmt.Sprint(ip, cfg), func() (*flows, *peer.Group, error) {
			ctl, stop := target(b, ip)
			if err := checkLimits(cfg, *serverAddr == ""); err != nil {
				stop()
				return nil, nil, err
			}
			fl, err := startFlows(ctl, cfg, netperfPorts, stop)
			if err != nil {
				return nil, nil, err
			}
			return fl, fl.run, nil
		})
		if err != nil {
			return 0, err
		}
		// Whatever fails, the flows end and the next -count starts anew.
		var got *Result
		err = kept.Round(func(fl *flows) (err error) {
			got, err = fl.round(int(n), region.ClockTimer{Region: r})
			return err
		})
		if got == nil {
			return 0, err
		}
		res.add(got)
		return got.Txns, err
	})
	r.EndOps(ops)
	slices.Sort(res.Lat)
	skip.OnlyIfNotSupported(b, err) // a limit here, or the remote server's machine has no room for a flow
	if err != nil {
		b.Fatalf("%s flows=%d req=%d rsp=%d cpu=%s, after %d transactions: %v", cfg.Kind, cfg.Flows, cfg.Req, cfg.Rsp, cfg.CPU, ops, err)
	}
	tps := float64(res.Txns) / b.Elapsed().Seconds()
	unit.Report(b, res.Txns, "tps")
	unit.Metric(b, tps/float64(cfg.Flows), "tps/flow")
	unit.Metric(b, float64(res.Percentile(50))/1e3, "p50-us")
	unit.Metric(b, float64(res.Percentile(99))/1e3, "p99-us")
	unit.Metric(b, res.SlowShare(), "slow/op")
	if share, ok := res.Seen.Share(); ok && res.Metered {
		unit.Metric(b, share, "same-cpu/op")
	}
}

// SlowShare is the share of the timed transactions slower than SlowAfter.
func (r *Result) SlowShare() float64 {
	if len(r.Lat) == 0 {
		return 0
	}
	return float64(r.Slow) / float64(len(r.Lat))
}

// target returns the control address of the server for family ip: the
// remote one named by KBENCH_NET_SERVER, or an in-process one on loopback
// that lives until stop.
func target(b *testing.B, ip int) (ctl netip.AddrPort, stop func() error) {
	b.Helper()
	if *serverAddr != "" {
		ap := netip.MustParseAddrPort(*serverAddr)
		if is4 := ap.Addr().Unmap().Is4(); is4 != (ip == 4) {
			skip.Nowf(b, "KBENCH_NET_SERVER=%s is not an IPv%d address; run a server on one to get these rows", *serverAddr, ip)
		}
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()), func() error { return nil }
	}
	lo := netip.MustParseAddr("127.0.0.1")
	if ip == 6 {
		lo = netip.IPv6Loopback()
		skip.IfNotSupported(b, probeLoopback6())
	}
	srv, err := Listen(netip.AddrPortFrom(lo, 0))
	if err != nil {
		b.Fatalf("in-process netbench server on %v: %v", lo, err)
	}
	go srv.Serve()
	return srv.Addr(), srv.Close
}

// probeLoopback6 checks that a TCP socket can bind ::1.
func probeLoopback6() error {
	fd, err := unix.Socket(unix.AF_INET6, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, unix.IPPROTO_TCP)
	if err == nil {
		defer unix.Close(fd)
		err = unix.Bind(fd, &unix.SockaddrInet6{Addr: netip.IPv6Loopback().As16()})
	}
	if err != nil {
		return &skip.Unsupported{Feature: "IPv6 loopback (bind ::1)", Err: err,
			Hint: "boot without ipv6.disable=1 and give lo its ::1 (sysctl net.ipv6.conf.lo.disable_ipv6=0)"}
	}
	return nil
}
