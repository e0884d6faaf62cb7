//go:build linux

package netbench

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/cpus"
	"github.com/kbench/kbench/internal/limits"
	"github.com/kbench/kbench/internal/peer"
)

// TestPlacedFlows: with the in-process server, flows of each kind and
// shape are metered round after round; pinned flows are seen where
// their placement put them (same-cpu/op 1 with cpu=same, 0 with
// cpu=cross), and cpu=any's share is a share.
func TestPlacedFlows(t *testing.T) {
	limits.NeedCPUs(t, "flows placed on one CPU and on two", 2)
	ctl := localServer(t, nil)
	for _, kind := range []Kind{CRR, RR} {
		for _, shared := range []bool{false, true} {
			for _, cpu := range peer.Placements {
				cfg := Config{Kind: kind, Flows: 2, Req: 1, Rsp: 1, Shared: shared, CPU: cpu}
				fl, err := startFlows(ctl, cfg, netperfPorts, nil)
				if err != nil {
					t.Fatal(err)
				}
				for round := range 2 {
					res, err := fl.round(400, nopTimer{})
					if err != nil {
						fl.close()
						t.Fatalf("%v shared=%v cpu=%s round %d: %v", kind, shared, cpu, round, err)
					}
					share, ok := res.Seen.Share()
					want, pinned := map[peer.Placement]float64{peer.Same: 1, peer.Cross: 0}[cpu]
					switch {
					case !res.Metered || !ok:
						t.Errorf("%v shared=%v cpu=%s round %d: no meter (%v, %+v)", kind, shared, cpu, round, res.Metered, res.Seen)
					case pinned && share != want, share < 0 || share > 1:
						t.Errorf("%v shared=%v cpu=%s round %d: same-CPU share %v (%+v), want %v", kind, shared, cpu, round, share, res.Seen, want)
					}
				}
				if err := fl.close(); err != nil {
					t.Fatalf("%v shared=%v cpu=%s: %v", kind, shared, cpu, err)
				}
			}
		}
	}
}

// TestServerLeavesItsCPU: a pinned server flow that moves to another
// CPU fails the round, naming the flow's server, its pin and where it
// was seen.
func TestServerLeavesItsCPU(t *testing.T) {
	limits.NeedCPUs(t, "a server flow pinned to one CPU that moves to another", 2)
	plan, err := peer.Place(peer.Cross)
	if err != nil {
		t.Fatal(err)
	}
	pin, to := plan.Away(0, 1)
	for _, kind := range []Kind{CRR, RR} {
		ctl := localServer(t, &serverHooks{start: func() error { return cpus.Pin(to) }})
		_, err := runFlows(ctl, Config{Kind: kind, Flows: 1, Req: 1, Rsp: 1, CPU: peer.Cross}, 200, nopTimer{}, netperfPorts)
		want := fmt.Sprintf("flow 0's server, pinned to CPU %d, was seen on CPU %d", pin, to)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: a server flow that left its pin: %v, want %q", kind, err, want)
		}
	}
}
