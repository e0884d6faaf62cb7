//go:build linux

package redisserver

import (
	"bufio"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/kbench/kbench/internal/limits"
)

// ReservedFds is what redis-server keeps for itself beyond one fd per
// client (CONFIG_MIN_RESERVED_FDS in its server.h): it serves maxclients =
// its RLIMIT_NOFILE less 32, and refuses to start when that leaves none.
// It raises its own soft limit as far as it may: to the hard limit, or
// beyond it with CAP_SYS_RESOURCE.
const ReservedFds = 32

// StartFds is how many fds Start holds here at once while it starts a
// server: its log file, /dev/null for its stdin, the two ends of
// os.StartProcess's exec status pipe, and the pidfd kept for it. The
// probe connection and the clients' come after the first three are
// closed.
const StartFds = 5

// CheckLimits checks, before Start, that this process can start a
// server and that the server can have clients connections: ReservedFds
// + clients must fit under the hard RLIMIT_NOFILE it inherits, unless
// this process may raise limits (CAP_SYS_RESOURCE). The error is a
// limits.Shortfall.
func CheckLimits(clients int) error {
	if err := limits.Fds("starting redis-server", StartFds, "its log file, /dev/null, the exec status pipe (2) and its pidfd"); err != nil {
		return err
	}
	_, hard, err := limits.Nofile()
	if err != nil {
		return err
	}
	need := int64(ReservedFds + clients)
	if limits.MayRaise() || hard >= uint64(need) {
		return nil
	}
	return &limits.Shortfall{
		Limit: "RLIMIT_NOFILE (hard)", What: fmt.Sprintf("redis-server with %d client connection(s)", clients), Need: need, Have: int64(hard),
		Why:  fmt.Sprintf("%d redis-server keeps for itself (CONFIG_MIN_RESERVED_FDS) + %d clients; it raises its soft limit to the hard one at most", ReservedFds, clients),
		Hint: fmt.Sprintf("raise the open file limit to at least %d (ulimit -n %d)", need, need),
	}
}

// checkMaxClients asks the server for maxclients, which it lowered to fit
// the RLIMIT_NOFILE it got, and returns a limits.Shortfall when that is
// fewer than clients.
func (s *Server) checkMaxClients(clients int) error {
	n, err := maxClients(s.Addr)
	if err != nil {
		return fmt.Errorf("CONFIG GET maxclients: %v", err)
	}
	if n >= clients {
		return nil
	}
	need := int64(ReservedFds + clients)
	return &limits.Shortfall{
		Limit: "RLIMIT_NOFILE", What: fmt.Sprintf("redis-server with %d client connection(s)", clients), Need: need, Have: int64(ReservedFds + n),
		Why:  fmt.Sprintf("%d redis-server keeps for itself (CONFIG_MIN_RESERVED_FDS) + %d clients; it got room for maxclients %d", ReservedFds, clients, n),
		Hint: fmt.Sprintf("raise the open file limit to at least %d (ulimit -n %d)", need, need),
	}
}

// tooFewFds returns the RLIMIT_NOFILE a server's log says it exited for,
// leaving no room for a client ("Your current 'ulimit -n' of 32 is not
// enough for the server to start"), and whether it says so.
func tooFewFds(log string) (int64, bool) {
	before, _, ok := strings.Cut(log, " is not enough for the server to start")
	if !ok {
		return 0, false
	}
	i := strings.LastIndex(before, " of ")
	n, err := strconv.ParseInt(before[i+len(" of "):], 10, 64)
	return n, i >= 0 && err == nil
}

// maxClients sends CONFIG GET maxclients to addr over a fresh connection.
func maxClients(addr string) (int, error) {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte("*3\r\n$6\r\nCONFIG\r\n$3\r\nGET\r\n$10\r\nmaxclients\r\n")); err != nil {
		return 0, err
	}
	// *2, $10, maxclients, $<len>, <value>
	r := bufio.NewReader(c)
	var lines []string
	for len(lines) < 5 {
		line, err := r.ReadString('\n')
		if err != nil {
			return 0, err
		}
		lines = append(lines, strings.TrimSpace(line))
		if len(lines) == 1 && lines[0] != "*2" {
			return 0, fmt.Errorf("answered %q", lines[0])
		}
	}
	n, err := strconv.Atoi(lines[4])
	if err != nil || lines[2] != "maxclients" {
		return 0, fmt.Errorf("answered %q", strings.Join(lines, " "))
	}
	return n, nil
}
