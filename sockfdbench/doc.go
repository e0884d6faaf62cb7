//go:build linux

// Package sockfdbench reproduces report 003 (docs/reports.md):
// stress-ng's sockfd stressor moved 6.1% with the cache-line placement of
// the global unix_gc_lock, which every SCM_RIGHTS send (unix_add_edges)
// and receive (unix_del_edges) takes; with one instance per CPU, 48% of
// cycles spun on it.
//
// # BenchmarkSockfd
//
// Sockfd/shape=stress-ng replays stress-sockfd.c (stress-ng V0.15.06 and
// current master do the same). Per pair, a listening AF_UNIX SOCK_STREAM
// socket (SO_REUSEADDR, bound to a path in a private temporary directory,
// listen backlog 10), then:
//
//   - server: accept(fd, NULL, NULL); per op open("/dev/zero",
//     O_RDWR), sendmsg of one byte 'M' with that fd in SCM_RIGHTS,
//     close(fd), and a sendmsg whose SCM_RIGHTS fd is RLIMIT_NOFILE+1,
//     which must fail with EBADF; after the client's per-connection limit
//     close the connection and accept the next; at the end unlink the path
//     (here at the row's end: the listener serves every round).
//   - client: socket, SO_REUSEADDR, connect; per message recvmsg
//     (control buffer sized for the fds), FIONREAD on each received fd and
//     a one-byte read if it reports any (/dev/zero answers ENOTTY), keeping
//     the fds; once it holds the per-connection limit, close them all,
//     shutdown(SHUT_RDWR), close and reconnect.
//
// One op is one server iteration, as one stress-ng bogo-op is; the client
// receives every message, and the timed section ends when it has. The
// per-connection limit is stress-ng's: RLIMIT_NOFILE less the fds open,
// and as root 64 fewer divided among the instances (pairs), here also
// keeping 8 fds free and rounded to whole messages. A limit too low for
// one message skips the row, naming RLIMIT_NOFILE.
//
// Keys: kind=file passes /dev/zero fds (stress-ng); kind=unix passes
// fresh AF_UNIX stream sockets, which the kernel also adds to the unix
// garbage collector's graph as vertices and edges. fds=1 is stress-ng;
// fds=16 and fds=253 (SCM_MAX_FD) pass that many fds per message, opened
// and closed per op. run=serial is one pair; run=parallel one pair per
// GOMAXPROCS (lkp's nr_threads=100%), so -cpu=1,2 compares one and two.
// lkp's report is Sockfd/shape=stress-ng/kind=file/fds=1/run=parallel on a
// machine with one pair per CPU.
//
// cpu= places each pair (internal/peer's Placement, over the usable
// CPUs in ring order): cpu=any, every row, leaves server and client
// where the scheduler puts them, as stress-ng and lkp ran (the faithful
// rows: where the wakeups put a pair is kernel behaviour a regression can
// change); the kind=file fds=1 rows also run with cpu=same, pair i's
// server and client pinned to the i-th CPU of the ring (stress-ng
// --taskset 0 for one pair), and cpu=cross, its server on the i-th and its
// client on the next (stress-ng has no per-process pin; --taskset 0 and
// the client moved to CPU 1 with taskset -p is the same placement). The
// pinned rows take the scheduler's coin out of each sample (below) and
// are the ones for an A/B of the code path. Every row reports
// same-cpu/op, the share of ops in which the pair's two sides were last
// seen on one CPU (peer.Meter: each side reads its CPU at most once a
// millisecond, the server between takes of 64 ops, the client between
// batches of 32 messages); a pinned row fails when a side was seen off
// its CPU.
//
// Differences from stress-ng:
//   - mm=separate, every row: a server and its client are two child
//     processes of the test binary (internal/peer, internal/child), as
//     stress-ng's server and its fork are, where stress-ng's parent is
//     itself the server; they share only the op budget (peer.Budget) and
//     per pair the round each side has finished and a failed flag, in a
//     small shared mapping (peer.Mem). Each is a solo Go
//     process (thread.Solo): one P, accept, sendmsg and recvmsg raw.
//     Its loop runs on one thread, which unshares its fd table
//     (unshare(CLONE_FILES)) from the runtime's other threads, so, as in
//     stress-ng's single-threaded processes, fd lookups take the
//     single-owner fast path (where a seccomp profile refuses unshare,
//     the rows skip saying so).
//   - There is no mm=shared row (the two sides as threads of one
//     process, as kbench ran them before): an op switches context about
//     0.2-0.3 times, so the switch_mm that such a row would leave out is
//     a few percent of an op, within what these rows resolve on a noisy
//     machine (results/2026-11-30-separate-processes.md). prctlbench's PingPong and
//     netbench's mm=shared rows isolate it where it is most of the cost.
//   - Sends use MSG_NOSIGNAL (stress-ng passes 0), so a failed run
//     reports EPIPE instead of dying by SIGPIPE; the sending path is the
//     same until that error.
//   - stress-ng counts an op even when sendmsg failed with a tolerated
//     errno; here every op is a successful send. An unprivileged user may
//     have at most RLIMIT_NOFILE fds in flight (ETOOMANYREFS); the server
//     then yields and sends again, and the run logs how often.
//   - A row's sides, listeners and socket paths are set up once, by its
//     first round (which also checks the fds and tasks they need), and
//     each -count runs timed rounds of ops (internal/rounds: sized as
//     b.Loop sizes its iterations, all of them timed and counted)
//     shared among the pairs (taken in chunks of 64, peer.Taker), not a
//     fixed time. A round ends when the servers have done its ops: each
//     server closes the connection it serves; its client takes EOF with
//     the server's done word at this round as the round's end, closes
//     the fds it holds as at a reconnect and says so in its ack word;
//     until then the server, its counts sent, accepts and closes any
//     connection the client made meanwhile, so none is left queued for
//     the next round, whose first connect then meets its server's first
//     accept. The clock (region.ClockTimer) runs from every side's ready
//     to every side's counts.
//   - Each loop passes through the Go scheduler every 9 ms
//     (thread.Yielder), so that the runtime's monitor does not preempt it
//     by signal.
//
// Next to stress-ng (results/2026-11-30-solo-processes.md has the figures), the parallel row,
// report 003's configuration, runs near stress-ng's rate and the serial
// row below it. Both tools are bimodal on a small machine when unpinned:
// a pair that keeps to two CPUs rarely switches, a pair that meets on one
// switches about once an op and runs a third slower, so compare cpu=any
// rows over many rounds, with each other rather than with stress-ng's
// numbers, or compare the pinned rows.
//
// # BenchmarkSockfdGC
//
// One op makes and drops one cycle only the unix garbage collector can
// reclaim: socketpair(AF_UNIX, SOCK_STREAM), each end sent over itself
// (so each sits in flight in the other's receive queue), both closed. The
// timed section ends when the collector has freed them: no sampled
// socket (every 64th cycle's) is left in /proc/net/unix and the fd table
// is back to its starting size. Waiting, it closes a fresh AF_UNIX socket
// now and then, which schedules the collector while fds are in flight.
//
// # Checks
//
// Every round fails with the numbers when: the clients did not receive
// exactly the messages and fds the servers sent, each message one byte
// 'M' with exactly fds fds and no MSG_CTRUNC (so a failed EBADF send
// queued nothing); a sampled received fd
// (every fd of the first message, the first of every 64th) is not char
// device 1:5 (/dev/zero) or an AF_UNIX socket; an EBADF send did not fail
// with EBADF; a side's fd table does not return to its size before the
// round. At the row's end it fails when a server left its socket path
// behind or the test binary's fd table is not back to its size before the
// row. Both benchmarks report ops/s and fds/s.
package sockfdbench
