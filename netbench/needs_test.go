//go:build linux

package netbench

import (
	"errors"
	"fmt"
	"net/netip"
	"testing"

	"github.com/kbench/kbench/internal/limits"
)

// TestLowFdLimit runs a 16-flow mm=separate row under ulimit -n 32: it
// must skip naming RLIMIT_NOFILE.
func TestLowFdLimit(t *testing.T) {
	limits.SkipsUnderNofile(t, 32, "^BenchmarkTCPCRR$/^ip=4$/^flows=16$/^req=1$/^rsp=1$/^mm=separate$", "KBENCH_NET_FLOWS=16")
}

// TestNeedIsExact runs a 3-flow mm=separate row with the soft
// RLIMIT_NOFILE at exactly the fds open plus what checkLimits counts, and
// at one fewer: the row must pass at the first and fail at the second, so
// that the count is neither short nor padded. The row runs two rounds on
// its flows, as a row's trials do: the later one must need nothing more.
//
// mm=shared is left out: each flow thread's private table is a copy of
// the process's, and a fd another thread holds open for a moment when the
// copy is made (a /proc read) takes the slot the sweep's listing needs.
// At exactly the count that row then fails now and then ("listing the
// flow thread's fds: too many open files": seen in a TCG guest and once on
// this project's host); its count is exact only on a quiet process.
func TestNeedIsExact(t *testing.T) {
	if *serverAddr != "" {
		t.Skip("counts the in-process server's fds; KBENCH_NET_SERVER is set")
	}
	for _, shared := range []bool{false} {
		cfg := Config{Kind: RR, Flows: 3, Req: 1, Rsp: 1, Shared: shared}
		need, _ := fdsNeeded(cfg, true)
		limits.NeedIsExact(t, fmt.Sprintf("shared=%v", shared), need, func() (func() error, func()) {
			srv, err := Listen(netip.MustParseAddrPort("127.0.0.1:0"))
			if err != nil {
				t.Fatal(err)
			}
			go srv.Serve()
			run := func() error {
				fl, err := startFlows(srv.Addr(), cfg, netperfPorts, nil)
				if err != nil {
					return err
				}
				_, err = fl.round(1, nopTimer{})
				if err == nil {
					_, err = fl.round(20, nopTimer{})
				}
				return errors.Join(err, fl.close())
			}
			return run, func() { srv.Close() }
		})
	}
}
