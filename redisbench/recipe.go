//go:build linux

package redisbench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/kbench/kbench/internal/thread"
)

// The recipe's parameters: redis-benchmark -r 50000 -n 100000 -P 256.
const (
	KeySpace = 50000  // -r: each __rand_int__ is random() % KeySpace
	Requests = 100000 // -n: requests per test, rounded up to whole pipelines
	Pipeline = 256    // -P
	ZSetKey  = "myzset"
)

// randDigits is how many of a random field's 12 digits can be non-zero.
const randDigits = 5

// This fails to compile if some value below KeySpace needs more than
// randDigits digits.
const _ = uint(1e5 - KeySpace) // 1e5: the first value with randDigits+1 digits

// RoundRequests is how many requests redis-benchmark sends for -n Requests
// at pipeline depth p: it starts a batch while fewer than Requests were
// issued, so the last batch overshoots (391 x 256 = 100,096 at -P 256).
func RoundRequests(p int) int { return (Requests + p - 1) / p * p }

// RoundSizes splits a benchmark of n requests at pipeline depth p into
// whole rounds of RoundRequests(p): n rounded up, never a round cut short,
// so that the share of ZPOPMIN's empty pops (~57% of a round) does not
// depend on the n the testing package derived from the machine's speed.
func RoundSizes(n, p int) []int {
	round := RoundRequests(p)
	sizes := make([]int, (n+round-1)/round)
	for i := range sizes {
		sizes[i] = round
	}
	return sizes
}

// Value is redis-benchmark's 3-byte SET payload (-d 3): the first three
// bytes of genBenchmarkRandomData, an LCG seeded with 1234.
var Value = func() []byte {
	state := uint32(1234)
	v := make([]byte, 3)
	for i := range v {
		state = state*1103515245 + 12345
		v[i] = '0' + byte((state>>16)&63)
	}
	return v
}()

// Commands the benchmark can send, named as redis-benchmark's -t names them.
const (
	SET     = "SET"
	GET     = "GET"
	ZADD    = "ZADD"
	ZPOPMIN = "ZPOPMIN"
)

// Client names the code that sends a round's requests.
type Client string

const (
	// Wire writes and reads the bytes itself, as redis-benchmark does
	// (wire.go): the default for pipeline=256.
	Wire Client = "wire"
	// GoRedis is github.com/redis/go-redis/v9, the client a Go program
	// would use: pipeline=1 rows, and beside Wire at pipeline=256.
	GoRedis Client = "go-redis"
)

// Tally counts what the replies of one or more rounds said.
type Tally struct {
	Sent     int64 // requests written
	Replies  int64 // replies read and checked
	Added    int64 // ZADD replies of 1 (new members)
	NonEmpty int64 // ZPOPMIN replies with a member
	Empty    int64 // ZPOPMIN replies on an empty set
	Hits     int64 // GET replies with the value
	Misses   int64 // GET nil replies
}

// Session is the benchmark's two connections to one database, go-redis's
// and the wire client's, and the state the benchmark needs to predict
// replies: which key:<r> keys its SETs wrote.
type Session struct {
	ctx     context.Context
	c       *redis.Conn // the go-redis client's one connection, held for the session
	w       *wireConn
	rng     *rand.Rand
	written []bool // key:<r> written by this session's SETs
	loads   map[loadKey]*load
	wloads  map[loadKey]*wireLoad
}

type loadKey struct {
	cmd string
	p   int
}

// NewClient opens go-redis with exactly one RESP2 connection, on a
// blocking socket (dialBlocking): no separate pipeline pool, no CLIENT
// SETINFO, no retries (a retried pipeline would send its commands twice).
func NewClient(addr string, db int) *redis.Client {
	return redis.NewClient(&redis.Options{
		Addr:             addr,
		DB:               db,
		Protocol:         2,
		PoolSize:         1,
		MaxActiveConns:   1,
		PipelinePoolSize: -1,
		DisableIdentity:  true,
		MaxRetries:       -1,
		ReadTimeout:      -2, // no deadlines: blockingConn bounds each read(2) and write(2)
		WriteTimeout:     -2,
		Dialer:           dialBlocking,
	})
}

// NewSession takes the one connection of c, a client from NewClient, for
// good: go-redis checks a pooled connection's health each time it is
// taken from the pool (with blockingConn, two setsockopt calls), syscalls
// per batch that redis-benchmark does not make; a held connection skips
// them. It dials the wire client's connection to the same database.
func NewSession(ctx context.Context, c *redis.Client) (*Session, error) {
	opt := c.Options()
	w, err := dialWire(ctx, opt.Addr, opt.DB)
	if err != nil {
		return nil, fmt.Errorf("wire client: %w", err)
	}
	seed := uint64(time.Now().UnixNano()) ^ uint64(os.Getpid())
	return &Session{
		ctx:     ctx,
		c:       c.Conn(),
		w:       w,
		rng:     rand.New(rand.NewPCG(seed, seed>>7|1)),
		written: make([]bool, KeySpace),
		loads:   map[loadKey]*load{},
		wloads:  map[loadKey]*wireLoad{},
	}, nil
}

// fields are the random 12-digit fields of one pipeline's commands, built
// once with the commands and rewritten in place for each batch, as
// redis-benchmark does.
type fields struct {
	rand [][]byte // the 12-digit fields, in command order
	per  int      // fields per command
	r    []int    // for SET/GET: the key number of each command
}

// randomize gives every 12-digit field of commands [from, to) an
// independent random()%KeySpace, zero-padded as redis-benchmark prints it.
func (s *Session) randomize(f *fields, from, to int) {
	for i := from * f.per; i < to*f.per; i++ {
		d := f.rand[i]
		r := s.rng.IntN(KeySpace)
		if f.per == 1 {
			f.r[i] = r
		}
		// The field's leading zeros were written when the command was
		// built; r < KeySpace fits in its last randDigits digits.
		for j := 11; j >= 12-randDigits; j-- {
			d[j] = '0' + byte(r%10)
			r /= 10
		}
	}
}

// Round sends n requests of cmd with client in batches of p (the last one
// shorter when p does not divide n), checks every reply, and adds to t.
// Each batch's random fields are written into the pipeline before it is
// sent. When lat is not nil, each batch's time from its write to its last
// reply read and checked, in ns, is appended to it. Between batches the
// goroutine yields to the Go scheduler every thread.YieldEvery.
func (s *Session) Round(client Client, cmd string, p, n int, t *Tally, lat *[]int64) error {
	var (
		f     *fields
		batch func(k int, c *checker) error
	)
	switch client {
	case Wire:
		l := s.wireLoad(cmd, p)
		f, batch = &l.fields, func(k int, c *checker) error { return s.wireBatch(l, cmd, k, c) }
	case GoRedis:
		l := s.load(cmd, p)
		f, batch = &l.fields, func(k int, c *checker) error { return s.goRedisBatch(l, k, c) }
	default:
		return fmt.Errorf("redisbench: unknown client %q", client)
	}
	c := newChecker(s, t)
	var y thread.Yielder
	for sent := 0; sent < n; {
		k := min(p, n-sent)
		s.randomize(f, 0, k)
		t0 := thread.Clock()
		err := batch(k, &c)
		t1 := thread.Clock()
		t.Sent += int64(k)
		if err != nil {
			return err
		}
		if lat != nil {
			*lat = append(*lat, int64(t1-t0))
		}
		y.Tick(t1) // outside the batch's time
		sent += k
	}
	return nil
}

// checker verifies each reply against what its command must answer, for
// both clients, and counts it in t.
type checker struct {
	s         *Session
	t         *Tally
	lastScore float64 // of the last member ZPOPMIN popped in this round
}

func newChecker(s *Session, t *Tally) checker { return checker{s: s, t: t, lastScore: -1} }

// set checks SET key:<r>'s reply: OK.
func (c *checker) set(r int, status string, err error) error {
	if err != nil {
		return fmt.Errorf("SET key:%012d: %w", r, err)
	}
	if status != "OK" {
		return fmt.Errorf("SET key:%012d answered %s; want OK", r, status)
	}
	c.s.written[r] = true
	c.t.Replies++
	return nil
}

// checkGet checks GET key:<r>'s reply: the value for a key this session
// SET, nil for any other. val is a string for go-redis, the reply's bytes
// for the wire client: neither is copied.
func checkGet[T string | []byte](c *checker, r int, val T, isNil bool, err error) error {
	want := c.s.written[r]
	switch {
	case err != nil:
		return fmt.Errorf("GET key:%012d: %w", r, err)
	case isNil:
		if want {
			return fmt.Errorf("GET key:%012d answered nil, but this session SET it", r)
		}
		c.t.Misses++
	default:
		if !want || string(val) != string(Value) {
			return fmt.Errorf("GET key:%012d answered %q; this session wrote it: %v (value %q)", r, val, want, Value)
		}
		c.t.Hits++
	}
	c.t.Replies++
	return nil
}

// zadd checks a ZADD reply: 0 or 1 members added.
func (c *checker) zadd(v int64, err error) error {
	if err != nil {
		return fmt.Errorf("ZADD: %w", err)
	}
	if v < 0 || v > 1 {
		return fmt.Errorf("ZADD answered %d; want 0 or 1", v)
	}
	c.t.Added += v
	c.t.Replies++
	return nil
}

// zpopmin checks a ZPOPMIN reply of popped members (0 or 1), the last one
// scored score: members come in score order.
func (c *checker) zpopmin(popped int, score float64, err error) error {
	if err != nil {
		return fmt.Errorf("ZPOPMIN: %w", err)
	}
	switch popped {
	case 0:
		c.t.Empty++
	case 1:
		if score < c.lastScore {
			return fmt.Errorf("ZPOPMIN popped score %v after %v: not the minimum", score, c.lastScore)
		}
		c.lastScore = score
		c.t.NonEmpty++
	default:
		return fmt.Errorf("ZPOPMIN without count popped %d members", popped)
	}
	c.t.Replies++
	return nil
}

// Fill empties myzset and runs one recipe ZADD round (100,096 requests at
// -P 256, by the wire client) into it, the state redis-benchmark's ZPOPMIN
// test starts from. It returns the number of members, checked against
// ZCARD.
func (s *Session) Fill() (int64, error) {
	if err := s.c.Del(s.ctx, ZSetKey).Err(); err != nil {
		return 0, err
	}
	var t Tally
	if err := s.Round(Wire, ZADD, Pipeline, RoundRequests(Pipeline), &t, nil); err != nil {
		return 0, err
	}
	card, err := s.c.ZCard(s.ctx, ZSetKey).Result()
	if err != nil {
		return 0, err
	}
	if card != t.Added {
		return 0, fmt.Errorf("ZADD replies counted %d new members, ZCARD %s = %d", t.Added, ZSetKey, card)
	}
	return card, nil
}

// InStep checks both connections with a PING each (see wireConn.InStep):
// its reply must be the next one, PONG.
func (s *Session) InStep() error {
	if err := s.w.InStep(); err != nil {
		return err
	}
	if v, err := s.c.Ping(s.ctx).Result(); err != nil || v != "PONG" {
		return fmt.Errorf("go-redis connection out of step: PING answered %q, %v", v, err)
	}
	return nil
}

// Written lists the key numbers this session's SETs wrote.
func (s *Session) Written() []int {
	var out []int
	for r, w := range s.written {
		if w {
			out = append(out, r)
		}
	}
	return out
}

// Close closes the wire connection and gives go-redis's back to its
// client.
func (s *Session) Close() error { return errors.Join(s.w.Close(), s.c.Close()) }

// CheckPops checks a ZPOPMIN round of n requests on a set that a ZADD
// round filled with members members: the first min(n, members) pops return
// a member, the rest find the set empty.
func CheckPops(members int64, n int, popped, empty int64) error {
	want := min(int64(n), members)
	if popped != want || popped+empty != int64(n) {
		return fmt.Errorf("%d of %d ZPOPMIN replies popped a member and %d found the set empty; the ZADD round created %d members, so %d should have popped one",
			popped, n, empty, members, want)
	}
	return nil
}
