//go:build linux

package redisbench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
)

// wireConn sends requests and reads replies the way redis-benchmark does,
// on a blockingConn of its own: a batch's commands are one buffer, written
// with one write(2); replies are read 16 KiB at a time (hiredis's
// redisBufferRead) and parsed in place from the bytes, RESP2 type byte,
// length and CRLF, without building values.
type wireConn struct {
	conn   net.Conn
	in     []byte // read buffer: unparsed replies are in[r:w]
	r, w   int
	cur    reply // the last reply parsed
	broken error // set once the stream cannot be trusted
}

// readChunk is how much one read(2) asks for, as hiredis does.
const readChunk = 16 << 10

// dialWire connects to addr and, for a database other than 0, selects it
// (redis-benchmark's --dbnum); it sends no HELLO: the server speaks RESP2.
func dialWire(ctx context.Context, addr string, db int) (*wireConn, error) {
	c, err := dialBlocking(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	w := &wireConn{conn: c, in: make([]byte, 4*readChunk)}
	if db != 0 {
		if err := w.write(appendCommand(nil, "SELECT", strconv.Itoa(db))); err != nil {
			c.Close()
			return nil, err
		}
		rep, err := w.reply()
		if err == nil && (rep.kind != '+' || string(rep.str) != "OK") {
			err = fmt.Errorf("SELECT %d answered %s", db, rep)
		}
		if err != nil {
			c.Close()
			return nil, err
		}
	}
	return w, nil
}

func (w *wireConn) Close() error { return w.conn.Close() }

// write sends b, all of it (blockingConn.Write loops over short writes).
func (w *wireConn) write(b []byte) error {
	if w.broken != nil {
		return w.broken
	}
	if _, err := w.conn.Write(b); err != nil {
		w.broken = err
		return err
	}
	return nil
}

// InStep checks that the connection holds no reply beyond those its
// batches asked for: a PING's reply must come next, with nothing after it.
// A server that answered more than it was sent, or a batch that read fewer
// replies than it wrote, fails here.
func (w *wireConn) InStep() error {
	if err := w.write(appendCommand(nil, "PING")); err != nil {
		return err
	}
	rep, err := w.reply()
	if err != nil {
		return err
	}
	if rep.kind != '+' || string(rep.str) != "PONG" || w.r != w.w {
		return fmt.Errorf("wire connection out of step: PING answered %s with %d more bytes buffered", rep, w.w-w.r)
	}
	return nil
}

// reply is one parsed RESP2 reply. Its byte slices point into the read
// buffer and hold until the next call of reply.
type reply struct {
	kind  byte      // '+', '-', ':', '$' or '*'
	n     int64     // ':' the integer; '$' the length and '*' the count, -1 for nil
	str   []byte    // '+' and '-' the line; '$' the body
	elems [2][]byte // '*' the first two elements, when they are strings
}

func (r *reply) String() string {
	switch r.kind {
	case '+', '-':
		return fmt.Sprintf("%c%s", r.kind, r.str)
	case ':':
		return fmt.Sprintf(":%d", r.n)
	case '$':
		if r.n < 0 {
			return "nil"
		}
		return strconv.Quote(string(r.str))
	case '*':
		return fmt.Sprintf("an array of %d", r.n)
	}
	return fmt.Sprintf("type %q", r.kind)
}

// errShort means the buffer ends inside a reply: read more.
var errShort = errors.New("incomplete reply")

// maxReply bounds the buffer a single reply may need: far beyond any reply
// of the recipe's commands, it stops a stream gone wrong from growing it
// without end.
const maxReply = 1 << 20

// reply returns the next reply, reading from the socket until it is
// whole. The reply is w's own: it holds until the next call.
func (w *wireConn) reply() (*reply, error) {
	if w.broken != nil {
		return nil, w.broken
	}
	for {
		used, err := parseReply(w.in[w.r:w.w], &w.cur, 0)
		if err == nil {
			w.r += used
			return &w.cur, nil
		}
		if err != errShort {
			w.broken = fmt.Errorf("RESP protocol error: %w", err)
			return nil, w.broken
		}
		if err := w.fill(); err != nil {
			w.broken = err
			return nil, err
		}
	}
}

// fill reads up to readChunk more bytes after the unparsed ones, moving
// them to the buffer's start, or growing it, when it has no room.
func (w *wireConn) fill() error {
	if w.r == w.w {
		w.r, w.w = 0, 0
	}
	if len(w.in)-w.w < readChunk {
		pending := w.w - w.r
		if pending+readChunk > maxReply {
			return fmt.Errorf("RESP protocol error: a reply longer than %d bytes", maxReply)
		}
		if pending+readChunk > len(w.in) {
			w.in = append(make([]byte, 0, 2*len(w.in)), w.in[w.r:w.w]...)[:2*len(w.in)]
		} else {
			copy(w.in, w.in[w.r:w.w])
		}
		w.r, w.w = 0, pending
	}
	n, err := w.conn.Read(w.in[w.w : w.w+readChunk])
	w.w += n
	if err != nil && n == 0 {
		return fmt.Errorf("reading replies: %w", err)
	}
	return nil
}

// parseReply parses the reply at the start of b into rep and returns its
// length in bytes, errShort when b ends inside it, or what is wrong with
// it. Arrays nest at most 4 deep, beyond any reply of the recipe.
func parseReply(b []byte, rep *reply, depth int) (int, error) {
	*rep = reply{}
	// The line after the type byte, up to CRLF: a short loop, as lines
	// are a few bytes long.
	i := 1
	for i < len(b) && b[i] != '\r' {
		i++
	}
	if i+1 >= len(b) {
		if len(b) >= maxReply {
			return 0, fmt.Errorf("no CRLF in %d bytes", len(b))
		}
		return 0, errShort
	}
	if b[i+1] != '\n' {
		return 0, fmt.Errorf("CR without LF after %q", b[:i])
	}
	rep.kind = b[0]
	line, used := b[1:i], i+2
	var err error
	switch rep.kind {
	case '+', '-':
		rep.str = line
		return used, nil
	case ':':
		rep.n, err = parseInt(line)
		return used, err
	case '$':
		if rep.n, err = parseInt(line); err != nil || rep.n < -1 || rep.n > maxReply {
			return 0, fmt.Errorf("bulk length %q", line)
		}
		if rep.n == -1 {
			return used, nil
		}
		end := used + int(rep.n)
		if len(b) < end+2 {
			return 0, errShort
		}
		if b[end] != '\r' || b[end+1] != '\n' {
			return 0, fmt.Errorf("bulk string of %d bytes not followed by CRLF", rep.n)
		}
		rep.str = b[used:end]
		return end + 2, nil
	case '*':
		if rep.n, err = parseInt(line); err != nil || rep.n < -1 || rep.n > maxReply {
			return 0, fmt.Errorf("array length %q", line)
		}
		if depth >= 4 && rep.n > 0 {
			return 0, errors.New("arrays nested more than 4 deep")
		}
		var el reply
		for i := 0; i < int(rep.n); i++ {
			n, err := parseReply(b[used:], &el, depth+1)
			if err != nil {
				return 0, err
			}
			if i < len(rep.elems) && (el.kind == '$' || el.kind == '+') {
				rep.elems[i] = el.str
			}
			used += n
		}
		return used, nil
	}
	return 0, fmt.Errorf("type byte %q", rep.kind)
}

// parseInt parses a RESP integer: an optional '-' and decimal digits.
func parseInt(b []byte) (int64, error) {
	neg := len(b) > 0 && b[0] == '-'
	d := b
	if neg {
		d = b[1:]
	}
	if len(d) == 0 || len(d) > 18 {
		return 0, fmt.Errorf("integer %q", b)
	}
	var n int64
	for _, c := range d {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("integer %q", b)
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, nil
}

// parseScore parses a sorted-set score as Redis prints it: an integer for
// the recipe's scores, else a float.
func parseScore(b []byte) (float64, error) {
	if n, err := parseInt(b); err == nil {
		return float64(n), nil
	}
	return strconv.ParseFloat(string(b), 64)
}

// appendCommand appends the RESP encoding of args, as redis-benchmark's
// redisFormatCommand renders it: an array of bulk strings.
func appendCommand(b []byte, args ...string) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(len(args)), 10)
	b = append(b, "\r\n"...)
	for _, a := range args {
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(a)), 10)
		b = append(b, "\r\n"...)
		b = append(b, a...)
		b = append(b, "\r\n"...)
	}
	return b
}

// wireLoad is one pipeline of a command's RESP encoding, rendered once,
// back to back, as redis-benchmark renders its output buffer: each batch
// rewrites the random fields in place and writes a prefix of buf.
type wireLoad struct {
	fields
	buf  []byte
	size int // bytes of one command
}

// randField is what redis-benchmark's commands hold where a random number
// goes (__rand_int__, 12 bytes); the load replaces it with 12 digits.
const randField = "__rand_int__"

func (s *Session) wireLoad(cmd string, p int) *wireLoad {
	k := loadKey{cmd, p}
	if l := s.wloads[k]; l != nil {
		return l
	}
	var one []byte
	switch cmd {
	case SET:
		one = appendCommand(nil, "SET", "key:"+randField, string(Value))
	case GET:
		one = appendCommand(nil, "GET", "key:"+randField)
	case ZADD:
		one = appendCommand(nil, "ZADD", ZSetKey, randField, "element:"+randField)
	case ZPOPMIN:
		one = appendCommand(nil, "ZPOPMIN", ZSetKey)
	default:
		panic("redisbench: unknown command " + cmd)
	}
	l := &wireLoad{fields: fields{r: make([]int, p), per: bytes.Count(one, []byte(randField))}, size: len(one)}
	l.buf = bytes.Repeat(one, p)
	for off := 0; ; {
		i := bytes.Index(l.buf[off:], []byte(randField))
		if i < 0 {
			break
		}
		f := l.buf[off+i : off+i+len(randField) : off+i+len(randField)]
		copy(f, "000000000000")
		l.rand = append(l.rand, f)
		off += i + len(randField)
	}
	s.wloads[k] = l
	return l
}

// wireBatch writes the first k commands of l with one write, then parses
// and checks their replies as they are read. A reply that fails its check
// (an error reply fails with the server's message) fails the batch once
// the rest of it is read, so the connection stays in step.
func (s *Session) wireBatch(l *wireLoad, cmd string, k int, c *checker) error {
	if err := s.w.write(l.buf[:k*l.size]); err != nil {
		return err
	}
	var failed error
	for i := range k {
		rep, err := s.w.reply()
		if err != nil {
			return err
		}
		if err := c.wire(cmd, l.r[i], rep); err != nil && failed == nil {
			failed = err
		}
	}
	return failed
}

// serverError is an error reply, the server's message as is.
type serverError string

func (e serverError) Error() string { return string(e) }

// wire checks one reply to cmd; r is its key number (SET, GET).
func (c *checker) wire(cmd string, r int, rep *reply) error {
	var err error
	if rep.kind == '-' {
		err = serverError(rep.str)
	}
	switch cmd {
	case SET:
		status := "OK"
		if rep.kind != '+' || string(rep.str) != "OK" {
			status = rep.String()
		}
		return c.set(r, status, err)
	case GET:
		if err == nil && rep.kind != '$' {
			err = fmt.Errorf("answered %s, not a bulk string", rep)
		}
		return checkGet(c, r, rep.str, rep.n < 0, err)
	case ZADD:
		if err == nil && rep.kind != ':' {
			err = fmt.Errorf("answered %s, not an integer", rep)
		}
		return c.zadd(rep.n, err)
	case ZPOPMIN:
		popped, score := 0, -1.0
		switch {
		case err != nil:
		case rep.kind != '*':
			err = fmt.Errorf("answered %s, not an array", rep)
		case rep.n == 2 && rep.elems[0] != nil && rep.elems[1] != nil:
			popped = 1
			if score, err = parseScore(rep.elems[1]); err != nil {
				err = fmt.Errorf("score %q: %w", rep.elems[1], err)
			}
		case rep.n != 0:
			err = fmt.Errorf("answered an array of %d, not a member and its score", rep.n)
		}
		return c.zpopmin(popped, score, err)
	}
	return fmt.Errorf("redisbench: unknown command %s", cmd)
}
