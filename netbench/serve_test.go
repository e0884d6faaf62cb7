//go:build linux

package netbench

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/signal"
	"syscall"
	"testing"
)

// TestServe is the server side of remote mode: with KBENCH_NET_LISTEN set
// it runs a netbench server on that address until SIGINT or SIGTERM.
//
//	KBENCH_NET_LISTEN=10.0.0.1:12865 go test ./netbench -run='^TestServe$' -v -timeout=0
func TestServe(t *testing.T) {
	if *listenAddr == "" {
		t.Skip("runs a netbench server only when KBENCH_NET_LISTEN=ip:port is set (remote mode; see the README)")
	}
	srv, err := Listen(netip.MustParseAddrPort(*listenAddr))
	if err != nil {
		t.Fatalf("KBENCH_NET_LISTEN=%s: %v", *listenAddr, err)
	}
	srv.logf = func(format string, a ...any) { fmt.Printf(format+"\n", a...) }
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	fmt.Printf("netbench server listening on %v\n", srv.Addr())
	if err := srv.Serve(); err != nil {
		t.Fatal(err)
	}
	srv.Close()
	fmt.Println("netbench server stopped")
}
