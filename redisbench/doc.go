//go:build linux

// Package redisbench reproduces the Redis half of report 000
// (docs/reports.md): MMTests' redis-benchmark-small recipe,
// `redis-benchmark --csv -c 1 -r 50000
// -n 100000 -P 256`, whose ZPOPMIN rate fell 12.9% (999k to 871k
// requests/s) after "x86/bugs: Enable IBPB flush on BPF JIT allocation"
// while GET stayed flat. The server is real, unmodified redis-server.
//
// BenchmarkRecipe/cmd=SET|GET|ZADD|ZPOPMIN/pipeline=256/client=wire sends
// the recipe's commands, byte for byte as redis-benchmark formats them,
// 256 per write: `SET key:<r> <3 bytes>`, `GET key:<r>`, `ZADD myzset <r>
// element:<r>`, `ZPOPMIN myzset`, each <r> an independent random value
// below 50000 printed as 12 zero-padded digits. One op is one request;
// req/s is redis-benchmark's rps. p50-us/batch and p99-us/batch are
// percentiles of one pipeline's time from its write to its last reply read
// and checked (redis-benchmark reports per-request latency, which under
// pipelining is its batch's); server-us/req is redis-server's CPU time per
// request over the timed sections, summed over its threads from
// /proc/<pid>/task/*/schedstat (ns; where the kernel lacks schedstat,
// utime+stime from /proc/<pid>/stat in 10 ms ticks, left out for runs
// under a second), reported only for the server this binary started.
//
// The two clients. client=wire (wire.go) is the client the rows' numbers
// are meant to compare with redis-benchmark's: as redis-benchmark does, it
// renders each command's RESP encoding once, 256 times back to back,
// rewrites the 12 random digits in place before each batch
// (__rand_int__), sends the batch with one write(2), and reads the replies
// 16 KiB per read(2) (hiredis's buffer), parsing them from the bytes: type
// byte, length, CRLF, without building values; an error reply fails the
// row with the server's message. client=go-redis, beside it for GET and
// ZPOPMIN at pipeline=256, sends the same bytes through
// github.com/redis/go-redis/v9 (one BatchProcess and Exec per batch on a
// held connection): what a real Go client costs on the same round trip.
// go-redis spends about twice redis-benchmark's CPU per request, and that
// CPU lies on the serial round trip, so its rows run below redis-benchmark's
// rate on the same server (results/2026-11-30-redisbench-clients.md). The pipeline=1
// rows of GET and ZPOPMIN send one request per round trip with go-redis,
// whose CPU is small beside a round trip there. go-redis also does every
// untimed job: readiness, INFO commandstats, the DEL and ZCARD between
// rounds, the external-server refusal and clean-up. Both clients use
// blockingConn, a blocking TCP socket with TCP_NODELAY (see Differences).
//
// Rounds: redis-benchmark sends whole pipelines while fewer than -n
// requests went out, so one test is 391 x 256 = 100,096 requests (at
// pipeline=1, 100,000), and a row sends whole such rounds only. One op is
// one request. The rows run under internal/rounds, which asks for rounds
// as b.Loop asks for iterations (a first round, then as many more as the
// time so far says will fill -benchtime) within one call of the row's
// function, so no round is sent for a discarded trial of b.N; N is the
// requests sent, and the timer (with the region's counters and
// server-us/req) runs over every round's requests and nothing else, so
// ns/op and req/s describe the same requests. Each round's untimed setup
// is outside the timer: each ZPOPMIN round starts from myzset emptied and
// refilled by one recipe ZADD round (~43k members, by the wire client), so
// it pops ~43k members and then ~57k times from an empty set, as the
// recipe does, whatever the machine's speed; each ZADD round starts from
// an empty myzset, as after the recipe's ZPOPMIN; GET runs after a SET
// round, sent before the first round. A pipeline=1 round (100,000 round
// trips, about 2-5 s) is longer than the default -benchtime, so those rows
// send one round a -count. -benchtime=500480x is MMTests' five repetitions
// at pipeline=256 (at pipeline=1, 500000x); -benchtime=1x sends one round,
// and -benchtime=Nx for N > 1 two or more, since the testing package calls
// a row at b.N = 1 before b.N = N and each call sends whole rounds.
//
// Self-checks, the same for both clients (each b.Fatalf with the numbers):
// INFO commandstats deltas equal the requests sent, per command, with no
// failed or rejected calls; every reply is read and checked (SET answers
// OK; ZADD 0 or 1, whose sum equals ZCARD; ZPOPMIN pops in score order,
// and exactly min(requests, members) pops return a member, members being
// what the round's ZADD created; GET returns the value exactly for the
// keys this session's SETs wrote and nil otherwise); after each row, a
// PING on each connection must be answered next, so no reply was left
// unread or answered twice.
//
// The server: redis-server from PATH or KBENCH_REDIS_SERVER, started by
// internal/redisserver on 127.0.0.1 with an ephemeral port, --save "",
// --appendonly no and its own temporary directory, and stopped when the
// binary ends, is interrupted or dies. KBENCH_REDIS_ADDR uses a running
// loopback server instead, in database KBENCH_REDIS_DB (default 9), which
// must be empty; the benchmark deletes the keys it wrote when it ends.
// Without either, the benchmarks skip with how to get a server.
//
// Differences from redis-benchmark, all on the client side: the socket is
// blocking (blockingConn), so a batch is one write(2) and blocking
// read(2)s until its replies are in, where redis-benchmark's ae loop adds
// epoll_ctl/epoll_wait calls; Go's netpoller is kept off the round trip,
// whose park and wake added EAGAIN reads, epoll_pwait and futex calls to
// every batch. The benchmark holds two connections (go-redis's, idle while
// a wire row is timed, and the wire client's); go-redis opens its own with
// HELLO 2 (and SELECT for an external database), the wire client with
// SELECT for an external database only. The random numbers come from a
// PCG, not glibc random(). The myzset refill before each ZPOPMIN round
// (with a ZCARD), a DEL before and a ZCARD after each ZADD round, and a
// PING per connection after each row are extra, untimed commands; INFO
// commandstats is read before and after each row. Replies are checked as
// they are parsed, inside the batch's time, where redis-benchmark only
// frees them. The round's goroutine yields to the Go scheduler every 9 ms
// (thread.Yielder), between batches, so that the runtime's monitor does
// not take its P on every tick while it waits in read. The server sees the
// same commands in the same pipelines.
package redisbench
