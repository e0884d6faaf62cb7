//go:build linux

package redisbench

import (
	"errors"

	"github.com/redis/go-redis/v9"
)

// load is one pipeline's worth of go-redis commands, built once and
// reused: each batch rewrites the 12 random digits in place.
type load struct {
	fields
	cmds []redis.Cmder
	pipe redis.Pipeliner
}

func (s *Session) load(cmd string, p int) *load {
	k := loadKey{cmd, p}
	if l := s.loads[k]; l != nil {
		return l
	}
	l := &load{fields: fields{r: make([]int, p)}, cmds: make([]redis.Cmder, p), pipe: s.c.Pipeline()}
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
	l.per = len(l.rand) / p
	s.loads[k] = l
	return l
}

// goRedisBatch sends the first k commands of l with one BatchProcess and
// Exec on the held connection, then checks every reply.
func (s *Session) goRedisBatch(l *load, k int, c *checker) error {
	batch := l.cmds[:k]
	if err := l.pipe.BatchProcess(s.ctx, batch...); err != nil {
		return err
	}
	_, execErr := l.pipe.Exec(s.ctx)
	for i, cmd := range batch {
		if err := c.goRedis(l.r[i], cmd); err != nil {
			return err
		}
	}
	if execErr != nil && !errors.Is(execErr, redis.Nil) {
		return execErr
	}
	return nil
}

// goRedis checks one go-redis command's reply; r is its key number.
func (c *checker) goRedis(r int, cmd redis.Cmder) error {
	err := cmd.Err()
	switch cmd := cmd.(type) {
	case *redis.StatusCmd:
		return c.set(r, cmd.Val(), err)
	case *redis.StringCmd:
		if err == redis.Nil {
			return checkGet(c, r, "", true, nil)
		}
		return checkGet(c, r, cmd.Val(), false, err)
	case *redis.IntCmd:
		return c.zadd(cmd.Val(), err)
	case *redis.ZSliceCmd:
		v := cmd.Val()
		score := -1.0
		if len(v) > 0 {
			score = v[len(v)-1].Score
		}
		return c.zpopmin(len(v), score, err)
	}
	return errors.New("redisbench: unexpected go-redis command type")
}
