//go:build linux

package procfs

import (
	"os"
	"strings"
)

// CPUInfo holds cpuinfo's "key : value" lines over every CPU, in order.
type CPUInfo struct{ lines [][2]string }

// CPUInfo reads cpuinfo.
func (fs FS) CPUInfo() (*CPUInfo, error) {
	data, err := os.ReadFile(fs.Path("cpuinfo"))
	if err != nil {
		return nil, err
	}
	return ParseCPUInfo(data), nil
}

// ParseCPUInfo parses cpuinfo text. Lines without a colon (the blank
// lines between CPUs) are passed over; the format has no other rule.
func ParseCPUInfo(data []byte) *CPUInfo {
	c := &CPUInfo{}
	for l := range strings.SplitSeq(string(data), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok {
			c.lines = append(c.lines, [2]string{strings.TrimSpace(k), strings.TrimSpace(v)})
		}
	}
	return c
}

// Values returns the value of every line of key, in order: one per CPU
// on x86 ("model name", "microcode"), one in all for some keys of other
// architectures ("Hardware" on arm).
func (c *CPUInfo) Values(key string) []string {
	var vals []string
	for _, l := range c.lines {
		if l[0] == key {
			vals = append(vals, l[1])
		}
	}
	return vals
}
