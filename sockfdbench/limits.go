//go:build linux

package sockfdbench

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/kbench/kbench/internal/child"
	"github.com/kbench/kbench/internal/limits"
	"golang.org/x/sys/unix"
)

// headroom is the number of fd slots each fd table keeps free beyond what
// the plan uses: the connection socket, the listener, a /proc directory
// being counted, and slack, so that no open, accept or recvmsg hits EMFILE
// midway.
const headroom = 8

// rowFds are BenchmarkSockfd's fds per message.
var rowFds = []int{1, 16, scmMaxFD}

// maxPerConn caps the fds a client holds, as stress-ng caps max_fd at 1M.
const maxPerConn = 1 << 20

// plan is how one run fits RLIMIT_NOFILE.
type plan struct {
	perConn int // fds the client holds before it closes them and reconnects; a multiple of the fds per message
	badFD   int // an fd number above RLIMIT_NOFILE, never open, for the EBADF send
}

// makePlan derives the per-connection fd limit the way stress-ng does
// (stress_sockfd: max_fd = RLIMIT_NOFILE minus the fds already open; as
// root, 64 fewer and divided among the instances), then keeps headroom
// free and rounds down to whole messages. A limit too low for even one
// message is a limits.Shortfall naming RLIMIT_NOFILE.
func makePlan(nofile uint64, open, fdsPerMsg, pairs int, root bool) (plan, error) {
	if fdsPerMsg < 1 || fdsPerMsg > scmMaxFD || pairs < 1 {
		return plan{}, fmt.Errorf("sockfd: bad plan request: %d fds per message (1-%d), %d pairs", fdsPerMsg, scmMaxFD, pairs)
	}
	limit := int64(min(nofile, math.MaxInt32))
	free := limit - int64(open) - headroom
	// The server needs fdsPerMsg slots for one message; the client one
	// message's worth to receive it.
	if err := limits.CheckFds(fmt.Sprintf("passing %d fds per SCM_RIGHTS message", fdsPerMsg), nofile, open, headroom+fdsPerMsg,
		fmt.Sprintf("%d headroom + one message of %d fds", headroom, fdsPerMsg)); err != nil {
		return plan{}, err
	}
	perConn := limit - int64(open)
	if root {
		perConn = (perConn - 64) / int64(pairs)
	}
	perConn = min(perConn, free, maxPerConn)
	perConn -= perConn % int64(fdsPerMsg)
	perConn = max(perConn, int64(fdsPerMsg))
	badFD := int(min(limit+1, math.MaxInt32))
	return plan{perConn: int(perConn), badFD: badFD}, nil
}

// checkSides checks, before Start opens anything, that this process can
// run pairs pairs: a listening socket per pair, the shared state's memfd,
// and a child process per side (Start, once per row), started server then
// client, each holding child.ParentFds here and child.StartFds of its
// inherited fds while it starts (the server inherits the memfd and its
// listener, the client the memfd; the last to start is a client). The
// fds a client holds per connection are its own table's (makePlan).
//
//	fds:   pairs + 1 + child.Fds(2*pairs, 1)
//	tasks: 2*pairs*child.Tasks() (child.CheckTasks)
func checkSides(pairs int) error {
	what := fmt.Sprintf("%d server/client pair(s) as child processes", pairs)
	err := limits.Fds(what, pairs+1+child.Fds(2*pairs, 1),
		fmt.Sprintf("%d listeners + 1 memfd + %d child processes x %d + %d while the last starts", pairs, 2*pairs, child.ParentFds, child.StartFds(1)))
	if err != nil {
		return err
	}
	return child.CheckTasks(what, 2*pairs)
}

// plannedPerConn is the fds a client of a row with pairs pairs and
// fdsPerMsg fds per message will hold per connection, planned as Run plans
// it: from RLIMIT_NOFILE, the fds open now plus the row's listeners, and
// whether the process runs as root.
func plannedPerConn(fdsPerMsg, pairs int) (int, error) {
	limit, _, err := limits.Nofile()
	if err != nil {
		return 0, err
	}
	open, err := limits.OpenFds()
	if err != nil {
		return 0, err
	}
	pl, err := makePlan(limit, open+pairs, fdsPerMsg, pairs, unix.Geteuid() == 0)
	return pl.perConn, err
}

// PerConnSummary describes, for the fingerprint, the fds held per
// connection in every BenchmarkSockfd row (the same for both kinds):
// "serial: fds=1 19926, ...; parallel (2 pairs): ...". stress-ng derives
// it from the same limit, so two runs compare only where it is equal.
func PerConnSummary(pairsParallel int) string {
	var parts []string
	for _, run := range []struct {
		name  string
		pairs int
	}{{"serial", 1}, {fmt.Sprintf("parallel (%d pairs)", pairsParallel), pairsParallel}} {
		var rows []string
		for _, fds := range rowFds {
			n, err := plannedPerConn(fds, run.pairs)
			v := strconv.Itoa(n)
			if err != nil {
				v = "(none: " + err.Error() + ")"
			}
			rows = append(rows, fmt.Sprintf("fds=%d %s", fds, v))
		}
		parts = append(parts, run.name+": "+strings.Join(rows, ", "))
	}
	return strings.Join(parts, "; ")
}
