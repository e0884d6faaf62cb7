//go:build linux

package netbench

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// netstatPath is the calling thread's network namespace's TCP extension
// counters (TcpExt in /proc/net/netstat); tests point it at fixtures.
var netstatPath = "/proc/net/netstat"

// synRetrans reads TcpExt's TCPSynRetrans (SYNs the kernel sent again,
// Linux 3.10+) from the netstat file at path: the count that says
// transactions waited for a retransmit timeout, whatever the machine's
// speed.
func synRetrans(path string) (int64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	lines := strings.Split(string(data), "\n")
	// The file holds pairs of lines: "TcpExt: names..." then
	// "TcpExt: values...".
	for i := 0; i+1 < len(lines); i++ {
		names, values := strings.Fields(lines[i]), strings.Fields(lines[i+1])
		if len(names) == 0 || names[0] != "TcpExt:" || len(values) == 0 || values[0] != "TcpExt:" {
			continue
		}
		if len(names) != len(values) {
			return 0, fmt.Errorf("%s: TcpExt has %d names and %d values", filepath.Clean(path), len(names), len(values))
		}
		for j, name := range names {
			if name == "TCPSynRetrans" {
				v, err := strconv.ParseInt(values[j], 10, 64)
				if err != nil {
					return 0, fmt.Errorf("%s: TCPSynRetrans %q", filepath.Clean(path), values[j])
				}
				return v, nil
			}
		}
		return 0, fmt.Errorf("%s: no TCPSynRetrans in TcpExt (Linux 3.10+ has it)", filepath.Clean(path))
	}
	return 0, fmt.Errorf("%s: no TcpExt lines", filepath.Clean(path))
}
