//go:build linux

package netbench

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestNetnsSupportBlamesIP: an ip without netns (busybox's prints an
// error for `ip netns help`) is named as the cause, not the kernel; the
// host's iproute2 ip passes.
func TestNetnsSupportBlamesIP(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: netnsSupport probes unshare(CLONE_NEWNET) before the ip tool")
	}
	fake := filepath.Join(t.TempDir(), "ip")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\necho \"ip: invalid argument 'netns' to 'ip'\" >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	err := netnsSupport(fake)
	if err == nil || !strings.Contains(err.Error(), "has no netns command") || !strings.Contains(err.Error(), "iproute2") || strings.Contains(err.Error(), "CONFIG_NET_NS") {
		t.Errorf("busybox-like ip: %v; want it named as lacking netns, not the kernel", err)
	}
	if ipTool, lerr := exec.LookPath("ip"); lerr == nil {
		if out, _ := exec.Command(ipTool, "netns", "help").CombinedOutput(); strings.Contains(string(out), "ip netns add") {
			if err := netnsSupport(ipTool); err != nil {
				t.Errorf("iproute2's %s: %v", ipTool, err)
			}
		}
	}
}

// TestVethMissing: ip's answers for a kernel without the veth driver
// name the module; another failure is not blamed on it.
func TestVethMissing(t *testing.T) {
	for msg, missing := range map[string]bool{
		"ip link add ...: exit status 2: Error: Unknown device type.":                true,
		"ip link add ...: exit status 2: RTNETLINK answers: Operation not supported": true,
		"ip link add ...: exit status 2: RTNETLINK answers: File exists":             false,
	} {
		why := vethMissing(errors.New(msg))
		if missing != (why != "") || (missing && !strings.Contains(why, "modprobe veth")) {
			t.Errorf("%q: vethMissing = %q, want missing=%v naming modprobe veth", msg, why, missing)
		}
	}
}
