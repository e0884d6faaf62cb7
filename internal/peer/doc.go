//go:build linux

// Package peer runs a row's sides: the processes or threads that do a
// benchmark's work against each other (netperf's client and netserver's
// flow, stress-ng sockfd's server and client, UnixBench context1's two
// ends of a pipe), so that each benchmark package keeps only what its
// workload does.
//
// A side's body is a function of a Link, written once and run either as a
// child process (internal/child: a registered role, the reference tools'
// process structure, mm=separate) or on a throw-away thread of the test
// binary (internal/thread, mm=shared):
//
//	var pongRole = peer.Register("pingpong-pong", func(l peer.Link) error {
//		... set up once ...
//		for {
//			ok, err := l.Next(&round) // the parent's next round, or the end
//			if !ok || err != nil {
//				return err
//			}
//			... set up the round ...
//			if err := l.Ready(nil); err != nil { // wait for the go
//				return err
//			}
//			... round.N ops ...
//			if err := l.Result(counts); err != nil {
//				return err
//			}
//		}
//	})
//
// The parent starts the sides once (Start) and runs rounds on them
// (Group.Round): each round sends its arguments, waits until every side is
// ready, starts the timer, says go, waits for every side's result and
// stops the timer; Close ends the sides and reaps them, then runs what the
// row handed to Group.Defer (a control connection, a server, listening
// sockets, and the checks of what the sides leave behind, which belong to
// the row's end once the sides outlive a call of the row's function). A
// row keeps its sides across the calls of its function, one per -count
// (Kept[S], which owns them and their failure): the first round starts
// the sides, each call runs timed rounds on them (internal/rounds sizes
// them as b.Loop sizes its iterations), a round that fails ends them (the
// next call starts new ones), and the sides end when the row does. A
// row's children, servers and threads are so set up once per row, not
// once per round (issue 23): the kernel sees the same work per op, and
// the setup (a fork and exec of the test binary per side, a Go runtime's
// start) is paid once. A round that lasts as long as its sides serve
// (netbench's server flows, from OPEN to STOP) is Begin and End.
//
// # Placement
//
// Every two-sided row has a cpu= key (Placement): any leaves the sides
// where the scheduler puts them, as the reports ran; same pins both ends
// of a pair to one CPU and cross each to a CPU of its own (Place, Pinning:
// pair i over the usable CPUs in internal/cpus' ring order, the first
// end on ring[i] and, for cross, the second on ring[i+1]). A pin is set
// on the side's own thread (a child's role thread, or a throw-away
// thread of the test binary), never on the test binary's other threads.
// Fingerprint names the cross pair and what it shares (cpu.cross). A
// machine with one usable CPU skips cross rows, naming the affinity mask.
//
// A row's Meter watches its pairs: each side looks (Link.Look: getcpu at
// its round's go and then at most once a millisecond, between chunks of
// ops, a Taker's takes) and the parent sums the looks after each round into the share of round trips
// in which both ends were last seen on one CPU (same-cpu/op, a counter
// that kbcompare lists under a row that moved) and fails a pinned side
// that was seen off its CPU.
//
// The timer contract is internal/region's: the Timer a row passes is its
// Region (or region.ClockTimer, whose StopTimer leaves the instruments
// counting until End). The live sides' CPU time is counted by the
// counters' per-process totals, and the sides' processes are found by the
// process-tree walk of internal/procfs.
//
// Shared state between the sides is a memfd mapping (Mem): the op budget
// a round's sides take tickets from a chunk at a time (Budget, Taker), so
// that sides do not bounce one cache line per op, and whatever per-op
// slots the workload keeps. Threads map the same memfd, so a side's code
// is the same in both shapes.
package peer
