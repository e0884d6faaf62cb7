//go:build linux

package redisbench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeRedis is a loopback server that reads RESP commands on every
// connection and answers each with answer(i, name), i counting the
// commands of all connections other than go-redis's HELLO (refused, as a
// server without RESP3 would) and PING (PONG). It records the raw bytes of
// the counted commands.
type fakeRedis struct {
	addr string
	mu   sync.Mutex
	got  strings.Builder
	n    int
}

func startFake(t *testing.T, answer func(i int, name string) string) *fakeRedis {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeRedis{addr: l.Addr().String()}
	var conns sync.WaitGroup
	t.Cleanup(func() { l.Close(); conns.Wait() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go func() {
				defer conns.Done()
				defer c.Close()
				c.SetDeadline(time.Now().Add(10 * time.Second))
				r := bufio.NewReader(c)
				for {
					raw, name, err := readCommand(r)
					if err != nil {
						return
					}
					var out string
					switch name {
					case "HELLO":
						out = "-ERR unknown command 'HELLO'\r\n"
					case "PING":
						out = "+PONG\r\n"
					default:
						f.mu.Lock()
						f.got.WriteString(raw)
						i := f.n
						f.n++
						f.mu.Unlock()
						out = answer(i, name)
					}
					if _, err := io.WriteString(c, out); err != nil {
						return
					}
				}
			}()
		}
	}()
	return f
}

func (f *fakeRedis) received() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.got.String()
}

func fakeSession(t *testing.T, f *fakeRedis) *Session {
	t.Helper()
	c := NewClient(f.addr, 0)
	s, err := NewSession(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(); c.Close() })
	return s
}

var clients = []Client{Wire, GoRedis}

// TestWireFormat captures what a Round of each client writes on the
// socket and compares it with redis-benchmark's encoding of the recipe's
// commands (redisFormatCommand: uppercase name, bulk strings, 12-digit
// fields).
func TestWireFormat(t *testing.T) {
	for _, tc := range []struct {
		cmd, reply string
		one        string // one command's encoding, as a regexp
	}{
		{SET, "+OK\r\n", `\*3\r\n\$3\r\nSET\r\n\$16\r\nkey:\d{12}\r\n\$3\r\n` + regexp.QuoteMeta(string(Value)) + `\r\n`},
		{GET, "$-1\r\n", `\*2\r\n\$3\r\nGET\r\n\$16\r\nkey:\d{12}\r\n`},
		{ZADD, ":1\r\n", `\*4\r\n\$4\r\nZADD\r\n\$6\r\nmyzset\r\n\$12\r\n\d{12}\r\n\$20\r\nelement:\d{12}\r\n`},
		{ZPOPMIN, "*0\r\n", `\*2\r\n\$7\r\nZPOPMIN\r\n\$6\r\nmyzset\r\n`},
	} {
		for _, client := range clients {
			t.Run(tc.cmd+"/"+string(client), func(t *testing.T) {
				f := startFake(t, func(int, string) string { return tc.reply })
				s := fakeSession(t, f)
				var tl Tally
				if err := s.Round(client, tc.cmd, 3, 5, &tl, nil); err != nil {
					t.Fatal(err)
				}
				if tl.Sent != 5 || tl.Replies != 5 {
					t.Fatalf("sent %d, checked %d replies; want 5 and 5", tl.Sent, tl.Replies)
				}
				if wire := f.received(); !regexp.MustCompile(`^(` + tc.one + `){5}$`).MatchString(wire) {
					t.Fatalf("%s round on the wire:\n%q\nwant 5 x %s", tc.cmd, wire, tc.one)
				}
				if err := s.InStep(); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// countingConn records the size of each Write.
type countingConn struct {
	net.Conn
	writes []int
}

func (c *countingConn) Write(b []byte) (int, error) {
	c.writes = append(c.writes, len(b))
	return c.Conn.Write(b)
}

// TestRepliesChecked answers each client's requests with replies that
// break what the command must answer: each must fail the round.
func TestRepliesChecked(t *testing.T) {
	for _, tc := range []struct {
		cmd   string
		reply func(i int) string
		want  string
	}{
		{SET, func(int) string { return "+QUEUED\r\n" }, "want OK"},
		{SET, func(int) string { return ":1\r\n" }, "want OK"},
		{GET, func(int) string { return "$3\r\nabc\r\n" }, `answered "abc"`}, // no SET wrote it
		{GET, func(int) string { return ":0\r\n" }, "GET key:"},
		{ZADD, func(int) string { return ":2\r\n" }, "want 0 or 1"},
		{ZADD, func(int) string { return "+OK\r\n" }, "ZADD"},
		{ZPOPMIN, func(i int) string { return fmt.Sprintf("*2\r\n$1\r\na\r\n$2\r\n%d\r\n", 99-i) }, "popped score 98 after 99: not the minimum"},
		{ZPOPMIN, func(int) string { return "*4\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n" }, "ZPOPMIN"},
		{ZPOPMIN, func(int) string { return "-ERR the server's own words\r\n" }, "ERR the server's own words"},
	} {
		for _, client := range clients {
			t.Run(tc.cmd+"/"+string(client), func(t *testing.T) {
				f := startFake(t, func(i int, _ string) string { return tc.reply(i) })
				s := fakeSession(t, f)
				var tl Tally
				err := s.Round(client, tc.cmd, 8, 8, &tl, nil)
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("Round = %v; want an error with %q", err, tc.want)
				}
			})
		}
	}
}

// TestWireOneWritePerBatch: the wire client writes each batch with one
// Write (one write(2) on blockingConn), whole commands only.
func TestWireOneWritePerBatch(t *testing.T) {
	f := startFake(t, func(int, string) string { return "$-1\r\n" })
	s := fakeSession(t, f)
	cc := &countingConn{Conn: s.w.conn}
	s.w.conn = cc
	var tl Tally
	if err := s.Round(Wire, GET, 256, 700, &tl, nil); err != nil {
		t.Fatal(err)
	}
	one := len(appendCommand(nil, "GET", "key:"+randField))
	want := []int{256 * one, 256 * one, 188 * one}
	if fmt.Sprint(cc.writes) != fmt.Sprint(want) {
		t.Fatalf("writes of %v bytes; want %v (256, 256, 188 commands of %d bytes)", cc.writes, want, one)
	}
}

// TestWireRandomFields: every batch gives each field fresh digits, with
// the key numbers the checks predict from.
func TestWireRandomFields(t *testing.T) {
	f := startFake(t, func(int, string) string { return ":1\r\n" })
	s := fakeSession(t, f)
	var tl Tally
	if err := s.Round(Wire, ZADD, 256, 512, &tl, nil); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`\$12\r\n(\d{12})\r\n\$20\r\nelement:(\d{12})\r\n`).FindAllStringSubmatch(f.received(), -1)
	if len(m) != 512 {
		t.Fatalf("%d ZADDs on the wire, want 512", len(m))
	}
	distinct := map[string]bool{}
	same := 0
	for _, x := range m {
		distinct[x[1]] = true
		if x[1] == x[2] {
			same++
		}
	}
	if len(distinct) < 480 || same > 3 {
		t.Fatalf("512 scores hold %d distinct values, %d equal to their member's number: not fresh, independent draws", len(distinct), same)
	}
}

// okBut answers +OK to every command except the one numbered at.
func okBut(at int, reply string) func(int, string) string {
	return func(i int, _ string) string {
		if i == at {
			return reply
		}
		return "+OK\r\n"
	}
}

// TestWireErrorReply: an error reply fails the round with the server's
// message, after the rest of the batch is read, so the stream stays in
// step.
func TestWireErrorReply(t *testing.T) {
	f := startFake(t, okBut(300, "-ERR something the server said\r\n"))
	s := fakeSession(t, f)
	var tl Tally
	err := s.Round(Wire, SET, 256, 1024, &tl, nil)
	if err == nil || !strings.Contains(err.Error(), "ERR something the server said") {
		t.Fatalf("Round = %v; want the server's error", err)
	}
	if tl.Sent != 512 || tl.Replies != 511 {
		t.Fatalf("sent %d, checked %d: want the round stopped after the second batch (512 sent, 511 good replies)", tl.Sent, tl.Replies)
	}
	if err := s.InStep(); err != nil {
		t.Fatalf("after an error reply: %v", err)
	}
}

// TestWireRepliesOutOfStep: a reply more than the requests is caught by
// InStep; a reply less leaves the batch waiting until its read times out.
func TestWireRepliesOutOfStep(t *testing.T) {
	t.Run("extra", func(t *testing.T) {
		f := startFake(t, okBut(10, "+OK\r\n+OK\r\n"))
		s := fakeSession(t, f)
		var tl Tally
		if err := s.Round(Wire, SET, 256, 256, &tl, nil); err != nil {
			t.Fatal(err)
		}
		if err := s.InStep(); err == nil || !strings.Contains(err.Error(), "out of step") {
			t.Fatalf("an extra reply not caught: %v", err)
		}
	})
	t.Run("missing", func(t *testing.T) {
		f := startFake(t, okBut(10, ""))
		s := fakeSession(t, f)
		s.w.conn.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		var tl Tally
		err := s.Round(Wire, SET, 256, 256, &tl, nil)
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("a missing reply: Round = %v, want a read timeout", err)
		}
	})
}

func TestParseReply(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // reply.String()
		el   [2]string
	}{
		{"+OK\r\n", "+OK", [2]string{}},
		{"-ERR no\r\n", "-ERR no", [2]string{}},
		{":1\r\n", ":1", [2]string{}},
		{":-42\r\n", ":-42", [2]string{}},
		{"$3\r\nabc\r\n", `"abc"`, [2]string{}},
		{"$0\r\n\r\n", `""`, [2]string{}},
		{"$-1\r\n", "nil", [2]string{}},
		{"$4\r\na\r\nb\r\n", `"a\r\nb"`, [2]string{}},
		{"*0\r\n", "an array of 0", [2]string{}},
		{"*-1\r\n", "an array of -1", [2]string{}},
		{"*2\r\n$20\r\nelement:000000012345\r\n$5\r\n12345\r\n", "an array of 2", [2]string{"element:000000012345", "12345"}},
		{"*3\r\n:1\r\n*1\r\n+x\r\n$1\r\ny\r\n", "an array of 3", [2]string{}},
	} {
		var rep reply
		n, err := parseReply([]byte(tc.in+"+next\r\n"), &rep, 0)
		if err != nil || n != len(tc.in) || rep.String() != tc.want || string(rep.elems[0]) != tc.el[0] || string(rep.elems[1]) != tc.el[1] {
			t.Errorf("parseReply(%q) = %s %q %q, %d bytes, %v; want %s %q, %d bytes", tc.in, &rep, rep.elems[0], rep.elems[1], n, err, tc.want, tc.el, len(tc.in))
		}
		for cut := range len(tc.in) {
			if _, err := parseReply([]byte(tc.in[:cut]), &rep, 0); err != errShort {
				t.Errorf("parseReply(%q), cut at %d: %v; want errShort", tc.in, cut, err)
			}
		}
	}
	for _, bad := range []string{
		"?1\r\n", ":1\rx", ":\r\n", ":1x\r\n", "$-2\r\n", "$3\r\nabcd\r\n", "$x\r\n",
		"*-2\r\n", "*1\r\n?\r\n", "*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n",
	} {
		var rep reply
		if _, err := parseReply([]byte(bad), &rep, 0); err == nil || err == errShort {
			t.Errorf("parseReply(%q) = %v; want a protocol error", bad, err)
		}
	}
}

// TestWireReadsAcrossChunks feeds replies in pieces that cut them
// anywhere, and a bulk string larger than the read buffer, through the
// reader.
func TestWireReadsAcrossChunks(t *testing.T) {
	client, server := net.Pipe()
	defer client.Close()
	big := strings.Repeat("x", 200<<10)
	var stream strings.Builder
	for range 500 {
		stream.WriteString("*2\r\n$20\r\nelement:000000012345\r\n$5\r\n12345\r\n:1\r\n$-1\r\n")
	}
	stream.WriteString("$" + fmt.Sprint(len(big)) + "\r\n" + big + "\r\n+OK\r\n")
	go func() {
		defer server.Close()
		s := stream.String()
		for i := 0; len(s) > 0; i++ {
			n := min(len(s), 1+i*7%23)
			if i%50 == 0 {
				n = min(len(s), 40000)
			}
			server.Write([]byte(s[:n]))
			s = s[n:]
		}
	}()
	w := &wireConn{conn: client, in: make([]byte, 4*readChunk)}
	for i := range 500 {
		for _, want := range []string{"an array of 2", ":1", "nil"} {
			rep, err := w.reply()
			if err != nil || rep.String() != want {
				t.Fatalf("reply %d: %s, %v; want %s", i, rep, err, want)
			}
		}
	}
	if rep, err := w.reply(); err != nil || string(rep.str) != big {
		t.Fatalf("big bulk string: %d bytes, %v", len(rep.str), err)
	}
	if rep, err := w.reply(); err != nil || rep.String() != "+OK" {
		t.Fatalf("after the big reply: %s, %v", rep, err)
	}
	if _, err := w.reply(); !errors.Is(err, io.EOF) {
		t.Fatalf("at the end of the stream: %v, want EOF", err)
	}
}

// readCommand reads one RESP array of bulk strings and returns its bytes
// and its first element.
func readCommand(r *bufio.Reader) (raw, name string, err error) {
	var sb strings.Builder
	line, err := r.ReadString('\n')
	if err != nil {
		return "", "", err
	}
	sb.WriteString(line)
	var n int
	if _, err := fmt.Sscanf(line, "*%d\r\n", &n); err != nil {
		return "", "", fmt.Errorf("not an array: %q", line)
	}
	for i := 0; i < n; i++ {
		hdr, err := r.ReadString('\n')
		if err != nil {
			return "", "", err
		}
		var size int
		if _, err := fmt.Sscanf(hdr, "$%d\r\n", &size); err != nil {
			return "", "", fmt.Errorf("not a bulk string: %q", hdr)
		}
		body := make([]byte, size+2)
		if _, err := io.ReadFull(r, body); err != nil {
			return "", "", err
		}
		sb.WriteString(hdr)
		sb.Write(body)
		if i == 0 {
			name = strings.ToUpper(string(body[:size]))
		}
	}
	return sb.String(), name, nil
}
