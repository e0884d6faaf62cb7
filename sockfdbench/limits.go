//go:build linux

package sockfdbench

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/kbench/kbench/internal/skip"
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
// message is an error that wraps skip.ErrNotSupported and names the limit.
func makePlan(nofile uint64, open, fdsPerMsg, pairs int, root bool) (plan, error) {
	if fdsPerMsg < 1 || fdsPerMsg > scmMaxFD || pairs < 1 {
		return plan{}, fmt.Errorf("sockfd: bad plan request: %d fds per message (1-%d), %d pairs", fdsPerMsg, scmMaxFD, pairs)
	}
	limit := int64(min(nofile, math.MaxInt32))
	free := limit - int64(open) - headroom
	// The server needs fdsPerMsg slots for one message; the client one
	// message's worth to receive it.
	if free < int64(fdsPerMsg) {
		return plan{}, &skip.Unsupported{
			Feature: fmt.Sprintf("passing %d fds per SCM_RIGHTS message", fdsPerMsg),
			Err:     fmt.Errorf("RLIMIT_NOFILE soft limit is %d with %d fds open, leaving %d free after %d headroom", nofile, open, max(free, 0), headroom),
			Hint:    fmt.Sprintf("raise the soft limit to at least %d (ulimit -n)", int64(open)+headroom+int64(fdsPerMsg)),
		}
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

// nofile returns the RLIMIT_NOFILE soft limit.
func nofile() (uint64, error) {
	var r unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &r); err != nil {
		return 0, fmt.Errorf("getrlimit(RLIMIT_NOFILE): %s", skip.Errno(err))
	}
	return r.Cur, nil
}

// countFds counts the open fds of the calling thread's fd table, not
// counting the directory fd it opens to look. It uses raw syscalls so that
// it works on a thread with a private fd table, which the netpoller must
// never see.
func countFds() (int, error) {
	dfd, err := unix.Open("/proc/thread-self/fd", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, fmt.Errorf("open /proc/thread-self/fd: %s", skip.Errno(err))
	}
	defer unix.Close(dfd)
	buf := make([]byte, 8192)
	n := 0
	for {
		nb, err := unix.Getdents(dfd, buf)
		if err != nil {
			return 0, fmt.Errorf("getdents /proc/thread-self/fd: %s", skip.Errno(err))
		}
		if nb == 0 {
			break
		}
		_, c, _ := unix.ParseDirent(buf[:nb], -1, nil)
		n += c
	}
	// ParseDirent skips "." and ".."; the directory fd itself is listed.
	return n - 1, nil
}

// plannedPerConn is the fds a client of a row with pairs pairs and
// fdsPerMsg fds per message will hold per connection, planned as Run plans
// it: from RLIMIT_NOFILE, the fds open now plus the row's listeners, and
// whether the process runs as root.
func plannedPerConn(fdsPerMsg, pairs int) (int, error) {
	limit, err := nofile()
	if err != nil {
		return 0, err
	}
	open, err := countFds()
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
