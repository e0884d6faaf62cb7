//go:build linux

package sockfdbench

import (
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestCountsCheck(t *testing.T) {
	good := Counts{Ops: 100, MsgsRecv: 100, FdsRecv: 1600, Sampled: 17}
	if err := good.check(100, 16); err != nil {
		t.Fatalf("consistent counts rejected: %v", err)
	}
	for name, tc := range map[string]struct {
		mut  func(*Counts)
		want string
	}{
		"ops short":       {func(c *Counts) { c.Ops = 99 }, "did 99 ops, want 100"},
		"message lost":    {func(c *Counts) { c.MsgsRecv = 99 }, "received 99 messages"},
		"fd not received": {func(c *Counts) { c.FdsRecv = 1599 }, "received 100 messages with 1599 fds, servers sent 100 with 1600"},
		"extra message":   {func(c *Counts) { c.MsgsRecv = 101 }, "received 101 messages"},
		"nothing sampled": {func(c *Counts) { c.Sampled = 0 }, "no received fd was checked"},
	} {
		c := good
		tc.mut(&c)
		err := c.check(100, 16)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", name, err, tc.want)
		}
	}
}

func TestCheckFdsBack(t *testing.T) {
	if err := checkFdsBack("x", 7, 7); err != nil {
		t.Fatal(err)
	}
	err := checkFdsBack("client", 7, 9)
	if err == nil || !strings.Contains(err.Error(), "+2 leaked") {
		t.Fatalf("two leaked fds: %v", err)
	}
}

func TestCheckReceived(t *testing.T) {
	open := func(path string) int {
		fd, err := unix.Open(path, unix.O_RDWR|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { unix.Close(fd) })
		return fd
	}
	sock := func(domain int) int {
		fd, err := unix.Socket(domain, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { unix.Close(fd) })
		return fd
	}
	var pipe [2]int
	if err := unix.Pipe2(pipe[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(pipe[0]); unix.Close(pipe[1]) })

	zero, null, usock, isock := open("/dev/zero"), open("/dev/null"), sock(unix.AF_UNIX), sock(unix.AF_INET)
	for _, tc := range []struct {
		name string
		fd   int
		kind Kind
		want string // "" = passes
	}{
		{"zero as file", zero, KindFile, ""},
		{"unix socket as unix", usock, KindUnix, ""},
		{"null as file", null, KindFile, "device 1:3"},
		{"pipe as file", pipe[0], KindFile, "want /dev/zero"},
		{"zero as unix", zero, KindUnix, "want a socket"},
		{"inet socket as unix", isock, KindUnix, "domain 2"},
		{"closed fd", 1 << 20, KindFile, "EBADF"},
	} {
		err := checkReceived(tc.fd, tc.kind)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
}
