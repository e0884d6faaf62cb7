//go:build linux

// Package netbench reproduces report 004 (docs/reports.md):
// lkp's netperf TCP_CRR, 16 clients against 127.0.0.1 for 300 s, -11.6%
// Throughput_tps from a patch that only moved kernel code and data. It
// also runs TCP_RR.
//
// One op is one transaction. BenchmarkTCPCRR: the client makes a socket,
// sets SO_REUSEADDR, binds a local port taken sequentially from 5000-65535
// (netperf's pick_next_port_number: a random start, +1 per connection,
// skipping the server's port, wrapping at 65535, and moving on after
// EADDRINUSE or EADDRNOTAVAIL), connects, sends the request, receives the
// response, reads until EOF and closes; the server accepts, receives,
// sends and closes first, so TIME_WAIT lands on the server side.
// BenchmarkTCPRR: request and response on one connection per flow, made
// before the row's first trial and kept for the row, as netperf keeps it
// for its run. Rows: ip=4|6 (6 where ::1 binds),
// flows=1|16 (KBENCH_NET_FLOWS), req=1/rsp=1 (netperf's default, lkp's
// report) and req=64/rsp=1024, mm= (below) and cpu= (below). Each row
// reports tps (lkp Throughput_total_tps), tps/flow (Throughput_tps),
// p50-us and p99-us (transaction latency, of one transaction in 16),
// slow/op (of those) and same-cpu/op.
//
// # Placement: cpu=
//
// cpu=any leaves every flow's client and server where the scheduler
// puts them, as lkp's netperf ran: report 004's row is
// TCPCRR/ip=4/flows=16/req=1/rsp=1/mm=separate/cpu=any, and the
// scheduler's wakeup placement is kernel behaviour a regression can
// change. The ip=4, req=1, mm=separate rows also run pinned, as netperf
// -T lcpu,rcpu pins its client and netserver's child (internal/peer's
// Placement, over the usable CPUs in ring order): cpu=same pins flow i's
// client and server to the i-th CPU of the ring (-T0,0 for one flow on a
// machine whose ring starts 0,1), cpu=cross its client to the i-th and
// its server to the next (-T0,1; which pair, and what it shares, is the
// fingerprint's cpu.cross line). On a small machine an unpinned sample
// flips a coin between a pair that shares a CPU and one that keeps two
// (results/2026-12-01-placement.md: an unpinned TCP_RR flows=1 row's samples
// fall into two modes, a cross-CPU wakeup in every transaction of the second), so the
// pinned rows are the ones for an A/B of the code path, and cpu=any says
// what the whole kernel, scheduler included, does. cpu=same is the
// steadiest (1.09-1.22 max/min in a -count=10 run on a 2-vCPU VM); a
// cpu=cross row is as steady as the machine's cross-CPU wakeups, which
// on that VM varied 2-4x from minute to minute, for netperf -T0,1 too
// (results/2026-12-01-placement.md). Each row
// reports same-cpu/op: the share of transactions whose client and server
// were last seen on one CPU, each side reading its CPU (getcpu) at most
// once a millisecond, between blocks of 16 transactions, into a meter the
// in-process server's flows share (peer.Meter); a pinned row fails when a side was seen off its CPU. The
// pinned rows need both ends on this machine: with KBENCH_NET_SERVER
// they skip, and the other rows report no same-cpu/op.
//
// As netperf, each flow has its own client process and its own server
// process with its own listening socket (backlog 5): lkp's 16 netperf
// processes against a netserver that forks one child per test become 16
// client and 16 server child processes of the test binary
// (internal/child; in remote mode the server's flows are children of the
// TestServe process). Sockets are blocking and driven by direct syscalls
// (socket, setsockopt, bind, connect, sendto, recvfrom, accept4, close
// through golang.org/x/sys/unix, never the Go netpoller), Nagle on, no
// SO_LINGER. A flow's loop runs on one thread of its process, which
// unshares its fd table (unshare(CLONE_FILES)) from the Go runtime's
// other threads, so the kernel's fd lookups take the single-owner path
// as in netperf's single-threaded processes. A flow process runs solo
// (thread.Solo, as every child does): one P, and the calls that wait for
// the peer (connect, accept4, sendto, recvfrom) raw, so the Go runtime
// adds no work around them and no thread handoffs to the process. The
// client flows are internal/peer sides (one body, run as a process or a
// thread): they share the transaction budget and the latency slots
// through a shared mapping, taken 16 tickets at a time. The server's
// flows are peer sides too, one round each from OPEN to STOP, their
// counts in memory they share with the server. A line-based
// control connection (Go net, off the measured path) opens the flows,
// asks for the server's counts after each round (COUNTS: a flow server
// process keeps them in memory it shares with the server) and stops the
// flows at the end of the row (STOP), as netperf's control connection
// does; a flow server process still serving a client that neither
// finishes nor closes is killed then.
//
// A row is set up once: its first round checks the limits and starts the
// server (in-process), the server flows, the client flows and their RR
// connections, and each -count runs timed rounds of transactions on them
// (internal/rounds: a round of one, then rounds sized as b.Loop sizes its
// iterations, every one timed and counted, none thrown away); they end
// when the row does (peer.Kept). A row whose round fails ends its flows,
// and its next -count starts anew.
//
// mm=separate is that shape, the default and the rows that reproduce the
// report. mm=shared (ip=4, req=1 rows) runs every flow's client and
// server as threads of one process, each thread with a private fd table
// copied from the process's, in which it closes every socket but its own
// listening one (a control connection held in a copy would never close).
// Its switches between a client and its server keep the mm, so the
// difference between the two rows (where they share a CPU: same-cpu/op
// says how often) isolates what switch_mm costs on this kernel and CPU: the CR3/PCID switch, the conditional IBPB on a switch to
// another mm (cond_mitigation), mm_cpumask updates and per-mm TLB work,
// twice per transaction. Where a seccomp profile refuses unshare, the
// flows share their process's table and the netbench.fdtables line of the
// fingerprint says so; a server flow thread's data socket is then out of
// the stopping thread's reach, and one serving a remote client that
// neither finishes nor closes stays in recv until the server process
// exits, which Ctrl-C on TestServe brings about within 5 s. Tests that
// inject server faults (hooks) run their server flows as threads.
//
// Checks, every round: the server checks every request byte and counts
// transactions per flow; the client checks every response byte (each
// transaction's bytes depend on its number, so a stale or echoed message
// fails) and the EOF after it; the two counts of the round must match flow
// by flow. A round whose clients' kernel retransmitted SYNs (TcpExt
// TCPSynRetrans, a TIME_WAIT collision or a full backlog) for more than 1%
// of its transactions fails with the count. Timed transactions slower
// than 200 ms are reported as slow/op (their share of those timed), as
// evidence only: a fixed latency limit would fail every row of a slow
// kernel or an emulated guest, which is what the suite measures.
// TIME_WAIT build-up never fails a run: ports refused by bind or connect
// are walked past, as netperf does, and each flow's walk goes on from
// round to round.
//
// Remote mode: KBENCH_NET_SERVER=ip:port sends the clients to a netbench
// server on another host, started there with
//
//	KBENCH_NET_LISTEN=ip:port go test ./netbench -run='^TestServe$' -v -timeout=0
//
// and stopped with Ctrl-C. Its flows listen on the address the control
// connection arrived at. Run the same netbench on both hosts: a server
// from before the COUNTS verb answers a row's first round with "server
// answered COUNTS with \"ERR unknown request ...\"". The fingerprint records the TCP settings that
// change a TCP_CRR result (TIME_WAIT limits and reuse, timestamps, SYN
// cookies, somaxconn) on this machine as sysctl.*, and in remote mode also
// the server's, where TIME_WAIT piles up, as netbench.server.sysctl.*. TestRemoteNamespaces runs both ends in two network
// namespaces joined by a veth pair (root only).
//
// Differences from netperf 2.7 (src/nettest_omni.c, nettest_bsd.c):
//   - Each flow process is a Go program: besides its loop thread, the
//     runtime's monitor (sysmon), which wakes about a hundred times a
//     second, and idle threads. The monitor runs in SCHED_IDLE
//     (thread.Solo), on a CPU the flows leave idle, where the process
//     may leave SCHED_IDLE again (root, CAP_SYS_NICE or RLIMIT_NICE 20):
//     a thread the monitor clones inherits it, and the loop may run on
//     one; elsewhere the monitor keeps the normal policy. Each loop passes
//     through the Go scheduler every 9 ms (thread.Yielder), without which
//     the monitor would preempt it every 10 ms; in a solo process that
//     costs no switch. A loop that waits 10 ms in one call is still
//     preempted at its next function call, a handoff between threads,
//     but without a signal (thread.SoloGODEBUG).
//   - In mm=shared the flows are locked threads of the test binary, each
//     with a private fd table, their blocking calls through the runtime,
//     and GOMAXPROCS raised to 2*flows+2 during a run so that each
//     blocking thread has a P of its own and only the kernel schedules
//     them (with fewer Ps a thread returning from recv waits for the Go
//     scheduler to hand one back). There a yield of a locked thread is a
//     handoff between threads (futex calls and two switches), so about
//     one transaction in a hundred per flow carries one, which shows in
//     p99-us when it lands in a timed transaction.
//   - Each flow rotates through 256 request/response patterns (so a
//     stale or echoed message fails the byte check) where netperf reuses
//     one buffer each way; at req=64/rsp=1024 that is more user memory
//     touched per transaction than netperf's.
//   - netperf ignores a failed bind and lets connect pick an ephemeral
//     port; netbench walks on to the next port, so every CRR connection
//     is bound from the range.
//   - Per-flow listening sockets bind the loopback (or control) address,
//     not the wildcard netserver listens on, so nothing is reachable from
//     outside the machine.
//   - Sockets are opened with SOCK_CLOEXEC and accepted with accept4
//     (SOCK_CLOEXEC) so that none leaks into a child process; netserver
//     calls accept(2), which runs the same __sys_accept4 in the kernel.
//   - A round is a number of transactions shared by the flows (each
//     takes the next block of 16 tickets), not a fixed time, and a row's
//     rounds run on the same flows, between which the flows wait
//     (an RR connection idle, a CRR flow server in accept); the first
//     transaction of each block is timed, with two readings of the vDSO
//     clock around its system calls (LatEvery; netperf times
//     transactions only with histograms enabled), and both sides read
//     it for their Yielders once per 4 CRR or 16 RR transactions.
//   - netperf's -c -C CPU accounting is not done.
//
// The rows' rates and context switches next to netperf 2.7's
// (docs/references.md says how to compare them), and what each of the differences above was
// measured to cost, are in results/2026-11-30-solo-processes.md.
package netbench
