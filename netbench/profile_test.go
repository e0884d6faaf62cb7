//go:build linux

package netbench

import (
	"testing"

	"github.com/kbench/kbench/internal/kprofile"
)

// TestProfileShowsConnect: with KBENCH_PROFILE, a TCPCRR row's profile
// holds the test process's connects in the kernel (tcp_v4_connect under
// the connect system call) and the server side's accepts. The mm=shared
// row runs both sides in the test process; mm=separate's run in its
// child processes, whose samples carry their own pids.
func TestProfileShowsConnect(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a benchmark row with profiling")
	}
	profiles, pid := kprofile.ProfileRows(t, "^BenchmarkTCPCRR$/^ip=4$/^flows=1$/^req=1$/^rsp=1$/^mm=shared$", "300ms", "KBENCH_NET_FLOWS=1")
	if len(profiles) != 1 {
		t.Fatalf("%d profiles for one row and run", len(profiles))
	}
	for name, p := range profiles {
		cum := map[string]int64{}
		var total int64
		for _, w := range kprofile.KernelFunctions(p, pid) {
			cum[w.Name] = w.Cum
			total = w.Total
		}
		for _, fn := range []string{"tcp_v4_connect", "__sys_connect", "inet_csk_accept"} {
			if cum[fn] == 0 {
				t.Errorf("%s: no sample of pid %d has %s on its stack (%d samples)", name, pid, fn, total)
			}
		}
		t.Logf("%s: of %d samples of pid %d, tcp_v4_connect is on %d, inet_csk_accept on %d", name, total, pid, cum["tcp_v4_connect"], cum["inet_csk_accept"])
	}
}
