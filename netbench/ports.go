//go:build linux

package netbench

import "fmt"

// netperf's default client port range (nettest_omni.c client_port_min and
// client_port_max). As in pick_next_port_number, the upper bound is never
// used: the cursor wraps to PortMin when it reaches PortMax.
const (
	PortMin = 5000
	PortMax = 65535
)

// portWalker hands out local ports the way netperf's pick_next_port_number
// does for one netperf process: start at a random point of [min, max),
// step by one, skip the server's port, wrap to min on reaching max.
type portWalker struct {
	min, max int
	cur      int // last port handed out
	avoid    int // the server's data port
}

// newPortWalker starts a walk at start (netperf: min + rand() % (max-min)).
func newPortWalker(min, max, start, avoid int) (*portWalker, error) {
	if min < 1 || max > 65535 || min >= max {
		return nil, fmt.Errorf("netbench: bad port range %d-%d", min, max)
	}
	if start < min || start >= max {
		return nil, fmt.Errorf("netbench: start port %d outside %d-%d", start, min, max-1)
	}
	// netperf: "there will be a ++ before the first call to bind, so
	// subtract one".
	return &portWalker{min: min, max: max, cur: start - 1, avoid: avoid}, nil
}

// Next returns the next port to bind, in netperf's order.
func (w *portWalker) Next() int {
	w.cur++
	if w.cur == w.avoid {
		w.cur++
	}
	if w.cur >= w.max {
		w.cur = w.min
	}
	return w.cur
}

// Span is how many distinct ports a walk can visit; a transaction that has
// been refused that many ports in a row has no port left to try.
func (w *portWalker) Span() int { return w.max - w.min }
