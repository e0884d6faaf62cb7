//go:build linux

package netbench

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kbench/kbench/internal/skip"
	"github.com/kbench/kbench/internal/thread"
)

// Addresses of the test's own namespaces: a private /24 that exists only
// on the veth pair between them, never in the host's namespace.
const (
	nsServerIP = "10.213.61.1"
	nsClientIP = "10.213.61.2"
)

// TestRemoteNamespaces runs remote mode for real: two fresh network
// namespaces joined by a veth pair, a netbench server (this test binary,
// TestServe) in one, the benchmarks (this test binary again, with
// KBENCH_NET_SERVER) in the other.
func TestRemoteNamespaces(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two processes in network namespaces; skipped with -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root (CAP_SYS_ADMIN and CAP_NET_ADMIN) to create network namespaces and a veth pair; run as root")
	}
	ipTool, err := exec.LookPath("ip")
	if err != nil {
		t.Skip("needs the ip tool to create network namespaces: apt-get install iproute2")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	id := os.Getpid() % 100000
	nsA, nsB := fmt.Sprintf("kbnet%da", id), fmt.Sprintf("kbnet%db", id)
	vethA, vethB := fmt.Sprintf("kbv%da", id), fmt.Sprintf("kbv%db", id)
	ip := func(args ...string) error {
		out, err := exec.Command(ipTool, args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	if err := netnsSupport(ipTool); err != nil {
		t.Skip(err)
	}
	if err := ip("netns", "add", nsA); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ip("netns", "del", nsA) })
	if err := ip("netns", "add", nsB); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ip("netns", "del", nsB) })
	// Created straight inside the namespaces: the host's never sees it.
	if err := ip("link", "add", vethA, "netns", nsA, "type", "veth", "peer", "name", vethB, "netns", nsB); err != nil {
		if why := vethMissing(err); why != "" {
			t.Skip(why)
		}
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"-n", nsA, "addr", "add", nsServerIP + "/24", "dev", vethA},
		{"-n", nsB, "addr", "add", nsClientIP + "/24", "dev", vethB},
		{"-n", nsA, "link", "set", "lo", "up"},
		{"-n", nsB, "link", "set", "lo", "up"},
		{"-n", nsA, "link", "set", vethA, "up"},
		{"-n", nsB, "link", "set", vethB, "up"},
	} {
		if err := ip(args...); err != nil {
			t.Fatal(err)
		}
	}

	ctl := nsServerIP + ":12865"
	server := exec.Command(ipTool, "netns", "exec", nsA, self, "-test.run=^TestServe$", "-test.v", "-test.timeout=0")
	server.Env = childEnv("KBENCH_NET_LISTEN=" + ctl)
	server.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := server.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	server.Stderr = server.Stdout
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var serverLog []string
	stopped := false
	stopServer := func() {
		if stopped {
			return
		}
		stopped = true
		server.Process.Signal(syscall.SIGTERM)
		for l := range lines {
			serverLog = append(serverLog, l)
		}
		server.Wait()
	}
	t.Cleanup(stopServer)
	waitFor(t, lines, &serverLog, "netbench server listening on "+ctl)

	client := exec.Command(ipTool, "netns", "exec", nsB, self, "-test.run=^$", "-test.v",
		"-test.bench=^BenchmarkTCP(CRR|RR)$/ip=./flows=(1|16)/req=1/rsp=1/mm=separate", "-test.benchtime=300x", "-test.timeout=2m")
	client.Env = childEnv("KBENCH_NET_SERVER=" + ctl)
	client.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	res, err := client.CombinedOutput()
	if err != nil {
		t.Fatalf("benchmarks in %s against %s: %v\n%s", nsB, ctl, err, res)
	}
	for _, name := range []string{"TCPCRR/ip=4/flows=1/req=1/rsp=1/mm=separate", "TCPCRR/ip=4/flows=16/req=1/rsp=1/mm=separate", "TCPRR/ip=4/flows=1/req=1/rsp=1/mm=separate", "TCPRR/ip=4/flows=16/req=1/rsp=1/mm=separate"} {
		row := regexp.MustCompile(`(?m)^Benchmark` + regexp.QuoteMeta(name+"/cpu=any") + `-\d+\s+300\s+.* tps\b`)
		if !row.Match(res) {
			t.Errorf("no result row for %s in:\n%s", name, res)
		}
		// Both ends of a pinned row's flow are on this machine: against
		// a remote server those rows skip, saying why.
		for _, cpu := range []string{"same", "cross"} {
			skipped := regexp.MustCompile(`cpu=` + cpu + ` with the server at .* not supported; the pinned rows place both ends of a flow on this machine[^\n]*\n\s*--- SKIP: Benchmark` + regexp.QuoteMeta(name+"/cpu="+cpu) + `\n`)
			if !skipped.Match(res) {
				t.Errorf("%s/cpu=%s did not skip against a remote server:\n%s", name, cpu, res)
			}
		}
	}
	// The fingerprint carries the server namespace's TIME_WAIT settings.
	if !regexp.MustCompile(`(?m)^# kbench netbench\.server\.sysctl\.net\.ipv4\.tcp_tw_reuse: \d`).Match(res) {
		t.Errorf("no server tcp_tw_reuse in the fingerprint:\n%s", res)
	}
	if !strings.Contains(string(res), "is not an IPv6 address") {
		t.Errorf("ip=6 rows not skipped against an IPv4 server:\n%s", res)
	}
	stopServer()
	// Every row's STOP reached the server: one per row, whose trials
	// (b.N = 1 first, then 300) are rounds on the same flows.
	var stops int
	for _, l := range serverLog {
		if strings.Contains(l, "transactions") && strings.HasPrefix(l, "netbench server: "+nsClientIP) {
			stops++
		}
	}
	if stops != 4 || !strings.Contains(strings.Join(serverLog, "\n"), "netbench server stopped") {
		t.Errorf("server saw %d runs from %s, want 4 (one per row), and a clean stop:\n%s", stops, nsClientIP, strings.Join(serverLog, "\n"))
	}
}

// childEnv is this process's environment without KBENCH_NET_* variables,
// plus extra.
func childEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "KBENCH_NET_") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// waitFor reads lines until one contains want.
func waitFor(t *testing.T, lines <-chan string, log *[]string, want string) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("server exited before %q:\n%s", want, strings.Join(*log, "\n"))
			}
			*log = append(*log, l)
			if strings.Contains(l, want) {
				return
			}
		case <-deadline:
			t.Fatalf("no %q from the server in 30s:\n%s", want, strings.Join(*log, "\n"))
		}
	}
}

// netnsSupport says why this test cannot make network namespaces with
// ipTool, or nil: the kernel lacks them (CONFIG_NET_NS), refuses them
// here (privilege, a seccomp profile or LSM, user.max_net_namespaces), or
// the ip tool has no netns command (busybox's).
func netnsSupport(ipTool string) error {
	if _, err := os.Stat("/proc/self/ns/net"); err != nil {
		return fmt.Errorf("the kernel has no network namespaces (no /proc/self/ns/net: %v): it needs CONFIG_NET_NS=y", err)
	}
	// unshare on a throw-away thread: its namespace dies with it.
	if err := thread.Run(func() error { return unix.Unshare(unix.CLONE_NEWNET) }); err != nil {
		switch err {
		case unix.EINVAL:
			return fmt.Errorf("unshare(CLONE_NEWNET): %s: the kernel has no network namespaces: it needs CONFIG_NET_NS=y", skip.Errno(err))
		case unix.ENOSPC:
			return fmt.Errorf("unshare(CLONE_NEWNET): %s: user.max_net_namespaces is reached or 0 here; raise it", skip.Errno(err))
		case unix.EPERM, unix.EACCES:
			return fmt.Errorf("unshare(CLONE_NEWNET): %s: refused here, though root: a container without CAP_SYS_ADMIN, or a seccomp profile or LSM that forbids it", skip.Errno(err))
		}
		return fmt.Errorf("unshare(CLONE_NEWNET): %s", skip.Errno(err))
	}
	out, _ := exec.Command(ipTool, "netns", "help").CombinedOutput()
	if !strings.Contains(string(out), "ip netns add") {
		return fmt.Errorf("%s has no netns command (busybox's ip has none; `ip netns help` said %q): install iproute2's ip", ipTool, firstLine(out))
	}
	return nil
}

// vethMissing says, for an error of `ip link add type veth`, that the
// kernel has no veth driver and how to get one, or "" for another cause.
func vethMissing(err error) string {
	msg := err.Error()
	if strings.Contains(msg, "Unknown device type") || strings.Contains(msg, "not supported") {
		return fmt.Sprintf("the kernel has no veth driver: %v; load it (modprobe veth, for CONFIG_VETH=m: veth.ko must be in /lib/modules/$(uname -r)) or build with CONFIG_VETH=y", err)
	}
	return ""
}

func firstLine(b []byte) string {
	l, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	return l
}
