//go:build linux

package netbench

import "github.com/kbench/kbench/internal/procfs"

// tcpSysctls are the settings that change a TCP_CRR result: how TIME_WAIT
// sockets are kept and reused (they pile up on the server, which closes
// first), timestamps (which TIME_WAIT reuse needs, negotiated by both
// ends), SYN cookies and the accept backlog cap.
var tcpSysctls = []string{"net.ipv4.tcp_max_tw_buckets", "net.ipv4.tcp_tw_reuse", "net.ipv4.tcp_timestamps", "net.ipv4.tcp_syncookies", "net.core.somaxconn"}

// readSysctls reads tcpSysctls on this machine, in order; a missing one
// reads "(missing)".
func readSysctls() []string {
	vals := make([]string, len(tcpSysctls))
	for i, name := range tcpSysctls {
		vals[i] = "(missing)"
		if v, err := procfs.Host.Sysctl(name); err == nil {
			vals[i] = v
		}
	}
	return vals
}
