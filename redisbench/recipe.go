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

// Session is one RESP2 connection and the state the benchmark needs to
// predict replies: which key:<r> keys its SETs wrote.
type Session struct {
	ctx     context.Context
	c       *redis.Conn // the client's one connection, held for the session
	rng     *rand.Rand
	written []bool // key:<r> written by this session's SETs
	loads   map[loadKey]*load
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
// them.
func NewSession(ctx context.Context, c *redis.Client) *Session {
	seed := uint64(time.Now().UnixNano()) ^ uint64(os.Getpid())
	return &Session{
		ctx:     ctx,
		c:       c.Conn(),
		rng:     rand.New(rand.NewPCG(seed, seed>>7|1)),
		written: make([]bool, KeySpace),
		loads:   map[loadKey]*load{},
	}
}

// load is one pipeline's worth of commands, built once and reused: each
// batch rewrites the 12 random digits in place, as redis-benchmark does.
type load struct {
	cmd  string
	cmds []redis.Cmder
	rand [][]byte // the 12-digit fields, in command order
	r    []int    // for SET/GET: the key number of each command
	pipe redis.Pipeliner
}

func (s *Session) load(cmd string, p int) *load {
	k := loadKey{cmd, p}
	if l := s.loads[k]; l != nil {
		return l
	}
	l := &load{cmd: cmd, cmds: make([]redis.Cmder, p), r: make([]int, p), pipe: s.c.Pipeline()}
	field := func(prefix string) []byte {
		b := append([]byte(prefix), "000000000000"...)
		l.rand = append(l.rand, b[len(prefix):])
		return b
	}
	for i := range l.cmds {
		switch cmd {
		case SET:
			l.cmds[i] = redis.NewStatusCmd(s.ctx, "SET", field("key:"), Value)
		case GET:
			l.cmds[i] = redis.NewStringCmd(s.ctx, "GET", field("key:"))
		case ZADD:
			score := field("")
			l.cmds[i] = redis.NewIntCmd(s.ctx, "ZADD", ZSetKey, score, field("element:"))
		case ZPOPMIN:
			l.cmds[i] = redis.NewZSliceCmd(s.ctx, "ZPOPMIN", ZSetKey)
		default:
			panic("redisbench: unknown command " + cmd)
		}
	}
	s.loads[k] = l
	return l
}

// randomize gives every 12-digit field of the first n commands an
// independent random()%KeySpace, zero-padded as redis-benchmark prints it.
func (s *Session) randomize(l *load, n int) {
	per := len(l.rand) / len(l.cmds)
	for i, f := range l.rand[:n*per] {
		r := s.rng.IntN(KeySpace)
		if per == 1 {
			l.r[i] = r
		}
		// The field's leading zeros were written when the command was
		// built; r < KeySpace fits in its last randDigits digits.
		for j := 11; j >= 12-randDigits; j-- {
			f[j] = '0' + byte(r%10)
			r /= 10
		}
	}
}

// Round sends n requests of cmd in batches of p (the last one shorter when
// p does not divide n), checks every reply, and adds to t. When lat is not
// nil, each batch's round-trip time in ns is appended to it.
func (s *Session) Round(cmd string, p, n int, t *Tally, lat *[]int64) error {
	l := s.load(cmd, p)
	var lastScore float64 = -1
	var y thread.Yielder
	for sent := 0; sent < n; {
		k := min(p, n-sent)
		s.randomize(l, k)
		batch := l.cmds[:k]
		if err := l.pipe.BatchProcess(s.ctx, batch...); err != nil {
			return err
		}
		t0 := time.Now()
		_, execErr := l.pipe.Exec(s.ctx)
		t1 := time.Now()
		if lat != nil {
			*lat = append(*lat, t1.Sub(t0).Nanoseconds())
		}
		y.Tick(t1) // outside the batch's latency
		t.Sent += int64(k)
		if err := s.check(l, batch, t, &lastScore); err != nil {
			return err
		}
		if execErr != nil && !errors.Is(execErr, redis.Nil) {
			return execErr
		}
		sent += k
	}
	return nil
}

// check verifies each reply of a batch against what the command must
// answer and counts it.
func (s *Session) check(l *load, batch []redis.Cmder, t *Tally, lastScore *float64) error {
	for i, c := range batch {
		err := c.Err()
		switch c := c.(type) {
		case *redis.StatusCmd:
			if err != nil || c.Val() != "OK" {
				return fmt.Errorf("SET reply %q, %v; want OK", c.Val(), err)
			}
			s.written[l.r[i]] = true
		case *redis.StringCmd:
			want := s.written[l.r[i]]
			switch {
			case err == redis.Nil:
				if want {
					return fmt.Errorf("GET key:%012d answered nil, but this session SET it", l.r[i])
				}
				t.Misses++
			case err != nil:
				return fmt.Errorf("GET key:%012d: %v", l.r[i], err)
			default:
				if !want || c.Val() != string(Value) {
					return fmt.Errorf("GET key:%012d answered %q; this session wrote it: %v (value %q)", l.r[i], c.Val(), want, Value)
				}
				t.Hits++
			}
		case *redis.IntCmd:
			if err != nil || c.Val() < 0 || c.Val() > 1 {
				return fmt.Errorf("ZADD reply %d, %v; want 0 or 1", c.Val(), err)
			}
			t.Added += c.Val()
		case *redis.ZSliceCmd:
			if err != nil {
				return fmt.Errorf("ZPOPMIN: %v", err)
			}
			switch v := c.Val(); len(v) {
			case 0:
				t.Empty++
			case 1:
				if v[0].Score < *lastScore {
					return fmt.Errorf("ZPOPMIN popped score %v after %v: not the minimum", v[0].Score, *lastScore)
				}
				*lastScore = v[0].Score
				t.NonEmpty++
			default:
				return fmt.Errorf("ZPOPMIN without count popped %d members", len(v))
			}
		}
		t.Replies++
	}
	return nil
}

// Fill empties myzset and runs one recipe ZADD round (100,096 requests at
// -P 256) into it, the state redis-benchmark's ZPOPMIN test starts from.
// It returns the number of members, checked against ZCARD.
func (s *Session) Fill() (int64, error) {
	if err := s.c.Del(s.ctx, ZSetKey).Err(); err != nil {
		return 0, err
	}
	var t Tally
	if err := s.Round(ZADD, Pipeline, RoundRequests(Pipeline), &t, nil); err != nil {
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

// Close gives the connection back to its client.
func (s *Session) Close() error { return s.c.Close() }

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
