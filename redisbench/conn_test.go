//go:build linux

package redisbench

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// listen starts a loopback listener on network and returns it with the
// connection its first accept yields.
func listen(t *testing.T, network, addr string) (net.Listener, <-chan net.Conn) {
	t.Helper()
	l, err := net.Listen(network, addr)
	if err != nil {
		t.Skipf("no %s listener on %s: %v", network, addr, err)
	}
	t.Cleanup(func() { l.Close() })
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			close(accepted)
			return
		}
		t.Cleanup(func() { c.Close() })
		accepted <- c
	}()
	return l, accepted
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := dialBlocking(context.Background(), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestBlockingConnRoundTrip(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:0", "[::1]:0"} {
		t.Run(addr, func(t *testing.T) {
			l, accepted := listen(t, "tcp", addr)
			c := dial(t, l.Addr().String())
			peer := <-accepted
			if c.RemoteAddr().String() != l.Addr().String() {
				t.Errorf("RemoteAddr %v, want the listener's %v", c.RemoteAddr(), l.Addr())
			}
			if c.LocalAddr().String() != peer.RemoteAddr().String() {
				t.Errorf("LocalAddr %v, but the server sees the client at %v", c.LocalAddr(), peer.RemoteAddr())
			}
			// A write larger than one read, as a pipeline is.
			msg := make([]byte, 1<<20)
			for i := range msg {
				msg[i] = byte(i * 7)
			}
			go func() {
				io.CopyN(peer, peer, int64(len(msg)))
			}()
			if n, err := c.Write(msg); n != len(msg) || err != nil {
				t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(msg))
			}
			got := make([]byte, len(msg))
			if _, err := io.ReadFull(c, got); err != nil {
				t.Fatal(err)
			}
			if string(got) != string(msg) {
				t.Fatal("the echoed bytes differ from those written")
			}
		})
	}
}

func TestBlockingConnEOF(t *testing.T) {
	l, accepted := listen(t, "tcp", "127.0.0.1:0")
	c := dial(t, l.Addr().String())
	peer := <-accepted
	peer.Write([]byte("+OK\r\n"))
	peer.Close()
	got, err := io.ReadAll(c)
	if string(got) != "+OK\r\n" || err != nil {
		t.Fatalf("ReadAll = %q, %v; want the reply, then EOF (nil from ReadAll)", got, err)
	}
	if n, err := c.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Fatalf("Read after the peer closed = %d, %v; want 0, io.EOF", n, err)
	}
}

func TestBlockingConnDeadline(t *testing.T) {
	l, accepted := listen(t, "tcp", "127.0.0.1:0")
	c := dial(t, l.Addr().String())
	<-accepted // and never answers
	if err := c.SetReadDeadline(time.Now().Add(20 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	_, err := c.Read(make([]byte, 1))
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Read past the deadline returned %v; want a timeout error", err)
	}
	// The zero deadline restores the default timeout, not none.
	if err := c.SetDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	fd := int(c.(*blockingConn).fd.Load())
	for _, opt := range []int{unix.SO_RCVTIMEO, unix.SO_SNDTIMEO} {
		tv, err := unix.GetsockoptTimeval(fd, unix.SOL_SOCKET, opt)
		if err != nil {
			t.Fatal(err)
		}
		if got := time.Duration(tv.Nano()); got != ioTimeout {
			t.Errorf("socket option %d after SetDeadline(zero) = %v, want %v", opt, got, ioTimeout)
		}
	}
}

func TestBlockingConnCloseWakesReader(t *testing.T) {
	l, accepted := listen(t, "tcp", "127.0.0.1:0")
	c := dial(t, l.Addr().String())
	<-accepted
	read := make(chan error, 1)
	go func() {
		_, err := c.Read(make([]byte, 1))
		read <- err
	}()
	time.Sleep(20 * time.Millisecond) // let the read block, most of the time
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-read:
		// EOF when the read was blocked (shutdown woke it), a closed
		// error when Close came first: either way it returned.
		if err == nil {
			t.Fatal("Read on a closed connection returned no error")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close left a blocked Read waiting")
	}
	if err := c.Close(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("second Close = %v, want net.ErrClosed", err)
	}
	if _, err := c.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Write after Close = %v, want net.ErrClosed", err)
	}
}

func TestDialBlockingErrors(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	if _, err := dialBlocking(context.Background(), "tcp", addr); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("dial to a closed port: %v, want ECONNREFUSED", err)
	}
	if _, err := dialBlocking(context.Background(), "unix", "/tmp/redis.sock"); err == nil {
		t.Error("dial over unix: no error; blockingConn speaks TCP only")
	}
}

// TestBlockingConnWriteDeadline writes more than the socket buffers hold
// to a peer that does not read: Write must stop at the deadline with what
// it wrote so far and a timeout.
func TestBlockingConnWriteDeadline(t *testing.T) {
	l, accepted := listen(t, "tcp", "127.0.0.1:0")
	c := dial(t, l.Addr().String())
	<-accepted // and never reads
	if err := c.SetWriteDeadline(time.Now().Add(50 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	big := make([]byte, 64<<20)
	n, err := c.Write(big)
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("Write to a peer that does not read returned %d, %v; want a timeout", n, err)
	}
	if n <= 0 || n >= len(big) {
		t.Fatalf("Write returned %d of %d bytes with its timeout; want the part the socket took", n, len(big))
	}
}

// TestDialBlockingTimeout connects to a listener whose accept queue is
// full, so the kernel drops the SYN: the dial must end at the context's
// deadline with a timeout, not wait out the SYN retries.
func TestDialBlockingTimeout(t *testing.T) {
	lfd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(lfd)
	if err := unix.Bind(lfd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := unix.Listen(lfd, 0); err != nil { // one queued connection fills it
		t.Fatal(err)
	}
	sa, err := unix.Getsockname(lfd)
	if err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(sa.(*unix.SockaddrInet4).Port))
	for i := range 4 {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		c, err := dialBlocking(ctx, "tcp", addr)
		cancel()
		if err == nil {
			defer c.Close() // queued, never accepted
			continue
		}
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Fatalf("dial %d to a full accept queue: %v; want a timeout", i, err)
		}
		return
	}
	t.Fatal("4 dials to a listener with backlog 0 all connected; none could test the timeout")
}
