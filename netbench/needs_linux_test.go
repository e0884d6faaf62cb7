//go:build linux

package netbench

import (
	"net/netip"
	"testing"

	"github.com/kbench/kbench/internal/limits"
	"golang.org/x/sys/unix"
)

// TestLowFdLimit runs a 16-flow mm=separate row under ulimit -n 32: it
// must skip naming RLIMIT_NOFILE.
func TestLowFdLimit(t *testing.T) {
	limits.SkipsUnderNofile(t, 32, "^BenchmarkTCPCRR$/^ip=4$/^flows=16$/^req=1$/^rsp=1$/^mm=separate$", "KBENCH_NET_FLOWS=16")
}

// TestNeedIsExact runs a 3-flow row of each shape with the soft
// RLIMIT_NOFILE at exactly the fds open plus what checkLimits counts, and
// at one fewer: the row must pass at the first and fail at the second, so
// that the count is neither short nor padded.
func TestNeedIsExact(t *testing.T) {
	if *serverAddr != "" {
		t.Skip("counts the in-process server's fds; KBENCH_NET_SERVER is set")
	}
	var old unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	defer unix.Setrlimit(unix.RLIMIT_NOFILE, &old)
	for _, shared := range []bool{false, true} {
		cfg := Config{Kind: RR, Flows: 3, Req: 1, Rsp: 1, Shared: shared}
		need, _ := fdsNeeded(cfg, true)
		for _, slack := range []int{0, -1} {
			srv, err := Listen(netip.MustParseAddrPort("127.0.0.1:0"))
			if err != nil {
				t.Fatal(err)
			}
			go srv.Serve()
			// The last run's children's fds close on the runtime's time.
			if err := limits.SettleFds(); err != nil {
				t.Fatal(err)
			}
			soft, err := limits.SoftLimitFor(need + slack)
			if err != nil {
				t.Fatal(err)
			}
			lim := unix.Rlimit{Cur: soft, Max: old.Max}
			if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
				t.Fatal(err)
			}
			_, err = runFlows(srv.Addr(), cfg, 20, nopTimer{}, netperfPorts)
			unix.Setrlimit(unix.RLIMIT_NOFILE, &old)
			srv.Close()
			if slack == 0 && err != nil {
				t.Errorf("shared=%v, soft limit %d, the need (%d) exactly: %v", shared, lim.Cur, need, err)
			}
			if slack < 0 && err == nil {
				t.Errorf("shared=%v, soft limit %d, one below the need (%d): the row ran; the need is padded", shared, lim.Cur, need)
			}
		}
	}
}
