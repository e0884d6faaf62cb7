//go:build linux

package netbench

import "github.com/kbench/kbench/internal/procfs"

// netstatPath is the calling thread's network namespace's TCP extension
// counters (TcpExt in /proc/net/netstat); tests point it at fixtures.
var netstatPath = procfs.Host.Path("net/netstat")

// synRetrans reads TcpExt's TCPSynRetrans (SYNs the kernel sent again,
// Linux 3.10+) from the netstat file at path: the count that says
// transactions waited for a retransmit timeout, whatever the machine's
// speed.
func synRetrans(path string) (int64, error) {
	return procfs.ReadNetstat(path, "TcpExt", "TCPSynRetrans")
}
