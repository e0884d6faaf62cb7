//go:build linux

package redisserver

import (
	"errors"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/skip"
)

func TestTooFewFds(t *testing.T) {
	log := "19631:M 01 Dec 2026 12:57:21.662 # Your current 'ulimit -n' of 32 is not enough for the server to start. Please increase your open file limit to at least 10032. Exiting.\n"
	if n, ok := tooFewFds(log); !ok || n != 32 {
		t.Errorf("tooFewFds = %d, %v; want 32, true", n, ok)
	}
	if _, ok := tooFewFds("Ready to accept connections\n"); ok {
		t.Error("a clean log read as too few fds")
	}
}

// TestMaxClients starts a server for more clients than any limit allows:
// Start must stop it and return a skip naming RLIMIT_NOFILE and the
// server's maxclients.
func TestMaxClients(t *testing.T) {
	path := need(t)
	s, err := Start(Config{Path: path, Clients: 1 << 30})
	if s != nil {
		s.Stop()
	}
	if !errors.Is(err, skip.ErrNotSupported) || !strings.Contains(err.Error(), "RLIMIT_NOFILE") || !strings.Contains(err.Error(), "maxclients") {
		t.Fatalf("Start for 2^30 clients: %v; want a skip naming RLIMIT_NOFILE and maxclients", err)
	}
	if n, err := maxClients("127.0.0.1:1"); err == nil {
		t.Errorf("maxClients of no server: %d", n)
	}
}
