//go:build linux

package netbench

import (
	"fmt"
	"net/netip"

	"github.com/kbench/kbench/internal/options"
)

var (
	flowCounts = options.Ints("KBENCH_NET_FLOWS", "1,16", 1, 256,
		"flow counts (parallel netperf clients) for `netbench` `TCPCRR` and `TCPRR`; lkp's report ran 16")
	serverAddr = options.String("KBENCH_NET_SERVER", "a literal ip:port such as 10.0.0.2:12865 or [fd00::2]:12865", "", validAddrPort,
		"a `netbench` server on another host (remote mode; unset: an in-process server on loopback)")
	listenAddr = options.String("KBENCH_NET_LISTEN", "a literal ip:port such as 10.0.0.2:12865 or [::]:12865", "", validAddrPort,
		"where `netbench`'s `TestServe` listens (remote mode's server side)")
)

func validAddrPort(s string) error {
	ap, err := netip.ParseAddrPort(s)
	if err != nil {
		return fmt.Errorf("not a literal ip:port (%v)", err)
	}
	if ap.Port() == 0 {
		return fmt.Errorf("port 0 is not a server port")
	}
	return nil
}
