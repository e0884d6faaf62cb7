//go:build linux

package netbench

import (
	"fmt"

	"github.com/kbench/kbench/internal/child"
	"github.com/kbench/kbench/internal/limits"
)

// checkLimits works out the fds and tasks row cfg needs in this process,
// with the server in it (local) or on another host, and returns a
// limits.Shortfall when the machine cannot give them.
//
// Fds, mm=separate: the control connection (2 local: both ends; 1
// remote), the shared work's memfd, and per flow a child process for the
// client (child.ParentFds each, child.StartFds(1) while the last starts:
// it inherits the memfd); locally also per flow the server's listening
// socket, the memfd of its counts and its child process (inheriting
// both, but started before the clients, so the last client's start is
// the peak):
//
//	local:  2 + 1 + 2*flows + child.Fds(2*flows, 1)
//	remote: 1 + 1 + child.Fds(flows, 1)
//
// The flows are kept for the row's rounds: the first round checks, and
// the later ones open nothing more.
//
// mm=shared: the control connection, the shared work's memfd, locally the
// listening sockets and the memfds of the server flows' counts, and the
// flows' data sockets. Where flow threads have
// private fd tables (privateFiles), each thread's table is a copy of the
// process's, in which its sweep (closeSocketsExcept) opens one fd, the
// listing of /proc/thread-self/fd, before it closes the other sockets,
// whose slots its data socket then takes; where they share the
// process's, every client socket and accepted socket is in it, and the
// netstat counters read after each round (RR's connections open) take
// one more:
//
//	private: 2 + 1 + 2*flows + 1 (local), 1 + 1 + 1 (remote)
//	shared:  2 + 1 + 4*flows + 1 (local), 1 + 1 + flows + 1 (remote)
//
// The private count holds on a quiet process only: a fd another thread
// holds open for a moment (a /proc read) when a flow thread's copy is
// made takes the sweep's slot, and at exactly this limit the row then
// fails instead of running (an open defect; TestNeedIsExact leaves
// mm=shared out for it).
//
// Tasks: mm=separate starts a client process per flow, and locally a
// server process per flow, of child.Tasks() each (child.CheckTasks);
// mm=shared a throw-away thread per client flow and, locally, per server
// flow.
func checkLimits(cfg Config, local bool) error {
	what := fmt.Sprintf("%d flow(s) with mm=%s", cfg.Flows, map[bool]string{false: "separate", true: "shared"}[cfg.Shared])
	fds, why := fdsNeeded(cfg, local)
	if err := limits.Fds(what, fds, why); err != nil {
		return err
	}
	sides := 1
	if local {
		sides = 2
	}
	if cfg.Shared {
		return limits.Tasks(what, sides*cfg.Flows, fmt.Sprintf("%d flow threads", sides*cfg.Flows))
	}
	return child.CheckTasks(what, sides*cfg.Flows)
}

// fdsNeeded is the fds row cfg opens in this process (see checkLimits),
// and how they are made up.
func fdsNeeded(cfg Config, local bool) (fds int, why string) {
	switch {
	case !cfg.Shared && local:
		fds = 2 + 1 + 2*cfg.Flows + child.Fds(2*cfg.Flows, 1)
		why = fmt.Sprintf("2 control + 1 memfd + %d listeners + %d server memfds + %d child processes x %d + %d while one starts", cfg.Flows, cfg.Flows, 2*cfg.Flows, child.ParentFds, child.StartFds(1))
	case !cfg.Shared:
		fds = 1 + 1 + child.Fds(cfg.Flows, 1)
		why = fmt.Sprintf("1 control + 1 memfd + %d child processes x %d + %d while one starts", cfg.Flows, child.ParentFds, child.StartFds(1))
	case privateFiles() == nil && local:
		fds = 2 + 1 + 2*cfg.Flows + 1
		why = fmt.Sprintf("2 control + 1 memfd + %d listeners + %d server memfds + 1 for the sweep in each flow thread's copy of the table", cfg.Flows, cfg.Flows)
	case privateFiles() == nil:
		fds = 1 + 1 + 1
		why = "1 control + 1 memfd + 1 for the sweep in each flow thread's copy of the table"
	case local:
		fds = 2 + 1 + 4*cfg.Flows + 1
		why = fmt.Sprintf("2 control + 1 memfd + %d flows x 4 (listener, server memfd, client socket, accepted socket) in the shared table + 1 netstat read between rounds", cfg.Flows)
	default:
		fds = 1 + 1 + cfg.Flows + 1
		why = fmt.Sprintf("1 control + 1 memfd + %d client sockets in the shared table + 1 netstat read between rounds", cfg.Flows)
	}
	return fds, why
}

// flowFds is what one flow's server takes in the server's process: its
// listening socket and, in mm=separate, the memfd of its counts and its
// child process (inheriting both, and with metered the memfd of an
// in-process row's placement meter); in mm=shared the listener, the
// memfd, and one more in its thread's table (its sweep's listing in a
// private copy, the accepted socket in a shared table).
func flowFds(separate, metered bool) (int, string) {
	if separate {
		inherited := 2
		if metered {
			inherited = 3
		}
		return 2 + child.Fds(1, inherited), fmt.Sprintf("1 listener + 1 memfd + 1 child process x %d + %d while it starts", child.ParentFds, child.StartFds(inherited))
	}
	return 3, "1 listener + 1 memfd + 1 in its thread's table"
}
