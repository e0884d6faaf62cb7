//go:build linux

package redisbench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/kbench/kbench/internal/fingerprint"
	"github.com/kbench/kbench/internal/limits"
	"github.com/kbench/kbench/internal/options"
	"github.com/kbench/kbench/internal/redisserver"
)

var (
	externalAddr = options.String("KBENCH_REDIS_ADDR", "host:port of a Redis server on a loopback address", "", checkLoopback,
		"use this running Redis server instead of starting one (unset: `redisbench` starts its own); it must hold no keys in `KBENCH_REDIS_DB`")
	externalDB = options.Int("KBENCH_REDIS_DB", "9", 0, 1000,
		"`redisbench`'s database on the `KBENCH_REDIS_ADDR` server; it must be empty")
)

// checkLoopback accepts host:port where host is a loopback address or
// localhost: the benchmark measures one machine's kernel, not a network.
func checkLoopback(s string) error {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return err
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("port %q is not a number from 1 to 65535", port)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%q is not a loopback address (127.0.0.0/8, ::1 or localhost)", host)
	}
	return nil
}

// Target is the server the benchmarks talk to: one this binary started, or
// an external one named by KBENCH_REDIS_ADDR.
type Target struct {
	Addr    string
	DB      int
	PID     int // the local server's pid, for its CPU time; 0 when external
	Started string
	Version string
	Err     error // why there is no usable server

	server  *redisserver.Server
	client  *redis.Client
	session *Session
}

// serverClients is the connections the benchmark opens to the server: the
// go-redis client's one and the wire client's (NewSession).
const serverClients = 2

// Open starts the local server, or connects to the external one and
// checks that its database is empty. Errors land in t.Err.
func Open() *Target {
	if *externalAddr != "" {
		return OpenExternal(*externalAddr, *externalDB)
	}
	t := &Target{}
	path, err := redisserver.Find()
	if err != nil {
		t.Err = err
		return t
	}
	t.Started = "local: " + redisserver.Describe(path)
	if err := redisserver.CheckLimits(serverClients); err != nil {
		t.Err = err
		return t
	}
	s, err := redisserver.Start(redisserver.Config{Path: path, Clients: serverClients})
	if err != nil {
		t.Err = err
		return t
	}
	t.server, t.Addr, t.PID = s, s.Addr, s.PID
	t.Version = versionLine(s.Info)
	t.connect()
	return t
}

// OpenExternal uses the server at addr, in database db, which must hold no
// keys: the benchmark deletes what it wrote, and never anything else.
func OpenExternal(addr string, db int) *Target {
	t := &Target{Addr: addr, DB: db, Started: fmt.Sprintf("external: KBENCH_REDIS_ADDR=%s, database %d", addr, db)}
	// The probe's connection, then the benchmark's.
	if err := limits.Fds("connecting to redis", serverClients, "go-redis's connection and the wire client's"); err != nil {
		t.Err = err
		return t
	}
	info, err := redisserver.Probe(addr, 5*time.Second)
	if err != nil {
		t.Err = fmt.Errorf("KBENCH_REDIS_ADDR=%s: no Redis server answers PING there: %v", addr, err)
		return t
	}
	t.Version = versionLine(info)
	t.connect()
	if t.Err != nil {
		return t
	}
	n, err := t.session.c.DBSize(context.Background()).Result()
	if err == nil && n != 0 {
		err = fmt.Errorf("database %d holds %d keys; redisbench writes %s and key:<r> keys and deletes only what it wrote, so it needs an empty database: choose another with KBENCH_REDIS_DB or empty this one yourself", db, n, ZSetKey)
	}
	if err != nil {
		t.Err = fmt.Errorf("KBENCH_REDIS_ADDR=%s: refusing to run: %w", addr, err)
		t.session.Close()
		t.client.Close()
		t.session, t.client = nil, nil
	}
	return t
}

func (t *Target) connect() {
	t.client = NewClient(t.Addr, t.DB)
	ctx := context.Background()
	if err := t.client.Ping(ctx).Err(); err != nil {
		t.Err = fmt.Errorf("go-redis cannot reach %s database %d: %w", t.Addr, t.DB, err)
		return
	}
	s, err := NewSession(ctx, t.client)
	if err != nil {
		t.Err = fmt.Errorf("%s database %d: %w", t.Addr, t.DB, err)
		return
	}
	t.session = s
}

func versionLine(info map[string]string) string {
	v := info["redis_version"]
	for _, k := range []string{"mem_allocator", "multiplexing_api", "arch_bits", "redis_build_id", "io_threads_active"} {
		if x, ok := info[k]; ok {
			v += " " + k + "=" + x
		}
	}
	return v
}

// Fields are the target's fingerprint lines.
func (t *Target) Fields() []fingerprint.Field {
	started, version := t.Started, t.Version
	if t.Err != nil {
		started = "unavailable: " + t.Err.Error()
	}
	if version == "" {
		version = "unknown (no server answered)"
	}
	return []fingerprint.Field{
		{Key: "redis.server", Value: started},
		{Key: "redis.version", Value: version},
		{Key: "redis.client", Value: "client=wire: redis-benchmark's RESP2 bytes on a blocking socket; client=go-redis: github.com/redis/go-redis/v9 " + redis.Version() + "; one connection each"},
	}
}

// Close deletes what the benchmark wrote on an external server, closes the
// connection and stops a local server.
func (t *Target) Close() error {
	var errs []error
	if t.session != nil {
		if t.server == nil {
			errs = append(errs, t.session.Cleanup())
		}
		errs = append(errs, t.session.Close())
	}
	if t.client != nil {
		errs = append(errs, t.client.Close())
	}
	if t.server != nil {
		errs = append(errs, t.server.Stop())
	}
	return errors.Join(errs...)
}

// Cleanup deletes myzset and every key:<r> this session wrote.
func (s *Session) Cleanup() error {
	keys := []string{ZSetKey}
	for _, r := range s.Written() {
		keys = append(keys, fmt.Sprintf("key:%012d", r))
	}
	for len(keys) > 0 {
		n := min(len(keys), 1000)
		if err := s.c.Del(s.ctx, keys[:n]...).Err(); err != nil {
			return err
		}
		keys = keys[n:]
	}
	clear(s.written)
	return nil
}
