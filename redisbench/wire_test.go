package redisbench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestWireFormat captures what a Round writes on the socket and compares
// it with redis-benchmark's encoding of the recipe's commands
// (redisFormatCommand: uppercase name, bulk strings, 12-digit fields).
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
		t.Run(tc.cmd, func(t *testing.T) {
			const n = 3
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			got := make(chan string, 1)
			go func() {
				c, err := l.Accept()
				if err != nil {
					got <- err.Error()
					return
				}
				defer c.Close()
				c.SetDeadline(time.Now().Add(5 * time.Second))
				r := bufio.NewReader(c)
				var sb strings.Builder
				for cmds := 0; cmds < n; {
					raw, name, err := readCommand(r)
					if err != nil {
						got <- err.Error()
						return
					}
					if name == "HELLO" { // go-redis's handshake, once per connection
						c.Write([]byte("-ERR unknown command 'HELLO'\r\n"))
						continue
					}
					sb.WriteString(raw)
					c.Write([]byte(tc.reply))
					cmds++
				}
				got <- sb.String()
			}()
			s, err := NewSession(context.Background(), NewClient(l.Addr().String(), 0))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			var tl Tally
			if err := s.Round(Wire, tc.cmd, n, n, &tl, nil); err != nil {
				t.Fatal(err)
			}
			wire := <-got
			if !regexp.MustCompile(`^(` + tc.one + `){3}$`).MatchString(wire) {
				t.Fatalf("%s batch on the wire:\n%q\nwant 3 x %s", tc.cmd, wire, tc.one)
			}
		})
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
