// Package redisbench reproduces the Redis half of report 000: MMTests'
// redis-benchmark-small recipe, `redis-benchmark --csv -c 1 -r 50000
// -n 100000 -P 256`, whose ZPOPMIN rate fell 12.9% (999k to 871k
// requests/s) after "x86/bugs: Enable IBPB flush on BPF JIT allocation"
// while GET stayed flat. The server is real, unmodified redis-server.
//
// BenchmarkRecipe/cmd=SET|GET|ZADD|ZPOPMIN/pipeline=256 sends the recipe's
// commands, byte for byte as redis-benchmark formats them, over one RESP2
// connection, 256 per write: `SET key:<r> <3 bytes>`, `GET key:<r>`,
// `ZADD myzset <r> element:<r>`, `ZPOPMIN myzset`, each <r> an independent
// random value below 50000 printed as 12 zero-padded digits, rewritten in
// place in commands built once (redis-benchmark's __rand_int__). One op is
// one request; req/s is redis-benchmark's rps. p50-us/batch and
// p99-us/batch are percentiles of one pipeline's round trip (redis-benchmark
// reports per-request latency, which under pipelining is its batch's);
// server-us/req is redis-server's CPU time per request over the timed
// sections, summed over its threads from /proc/<pid>/task/*/schedstat (ns;
// where the kernel lacks schedstat, utime+stime from /proc/<pid>/stat in
// 10 ms ticks, left out for runs under a second), reported only for the
// server this binary started. The pipeline=1 rows of GET and ZPOPMIN send
// one request per round trip.
//
// Rounds and b.N: redis-benchmark sends whole pipelines while fewer than
// -n requests went out, so one test is 391 x 256 = 100,096 requests (at
// pipeline=1, 100,000). The benchmark rounds b.N up to whole rounds of that
// size (RoundSizes) and reports what it sent: req/s and server-us/req count
// the requests sent, and ns/op is the timed time divided by them, not by
// b.N (the N column stays the testing package's b.N). Each ZPOPMIN round
// starts, outside the timer, from myzset emptied and refilled by one
// recipe ZADD round (~43k members), so it pops ~43k members and then ~57k
// times from an empty set, as the recipe does, whatever b.N the machine's
// speed led to; each ZADD round starts from an empty myzset, as after the
// recipe's ZPOPMIN; GET runs after a SET round. -benchtime=500480x is
// MMTests' five repetitions at pipeline=256 (at pipeline=1, 500000x);
// -benchtime=1x or 100x sends one round.
//
// Self-checks (each b.Fatalf with the numbers): INFO commandstats deltas
// equal the requests sent, per command, with no failed or rejected calls;
// every reply is read and checked (SET answers OK; ZADD 0 or 1, whose sum
// equals ZCARD; ZPOPMIN pops in score order, and exactly min(requests,
// members) pops return a member; GET returns the value exactly for the
// keys this session's SETs wrote and nil otherwise).
//
// The server: redis-server from PATH or KBENCH_REDIS_SERVER, started by
// internal/redisserver on 127.0.0.1 with an ephemeral port, --save "",
// --appendonly no and its own temporary directory, and stopped when the
// binary ends, is interrupted or dies. KBENCH_REDIS_ADDR uses a running
// loopback server instead, in database KBENCH_REDIS_DB (default 9), which
// must be empty; the benchmark deletes the keys it wrote when it ends.
// Without either, the benchmarks skip with how to get a server.
//
// Differences from redis-benchmark, all on the client side: the client is
// go-redis/v9 over a blocking socket (blockingConn, go-redis's Dialer), so
// a batch is one write(2) and blocking read(2)s until its replies are in,
// where redis-benchmark's ae loop adds epoll_ctl/epoll_wait calls; Go's
// netpoller is kept off the round trip, whose park and wake added EAGAIN
// reads, epoll_pwait and futex calls to every batch. go-redis spends about
// twice redis-benchmark's CPU per request, which lies on the serial round
// trip, so its rates run below redis-benchmark's against the same server
// (docs/results.md has the figures);
// go-redis opens the connection with HELLO 2 (and SELECT for an external
// database); the random numbers come from a PCG, not glibc
// random(); the myzset refill before each ZPOPMIN round (with a ZCARD),
// and a DEL before and a ZCARD after each ZADD round, are extra, untimed
// commands; INFO commandstats is read before and after each run; the
// round's goroutine yields to the Go scheduler every 9 ms
// (thread.Yielder), outside the timed batch, so that the runtime's
// monitor does not take its P on every tick while it waits in read. The server sees the same commands in the same
// pipelines.
package redisbench
