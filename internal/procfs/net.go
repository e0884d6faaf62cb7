//go:build linux

package procfs

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// The files of net/ describe the network namespace of the process
// reading them.

// ReadNetstat reads counter field of group ("TcpExt", "IpExt") from the
// netstat-format file at path: net/netstat, or net/snmp.
func ReadNetstat(path, group, field string) (int64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	groups, err := ParseNetstat(path, data)
	if err != nil {
		return 0, err
	}
	g, ok := groups[group]
	if !ok {
		return 0, fmt.Errorf("%s: no %s lines: %w", path, group, ErrMissing)
	}
	v, ok := g[field]
	if !ok {
		return 0, fmt.Errorf("%s: no %s in %s: %w", path, field, group, ErrMissing)
	}
	return v, nil
}

// ParseNetstat parses netstat-format text read from path: pairs of
// lines, "Group: name name ..." then "Group: value value ...", as
// net/netstat and net/snmp hold them. It returns each group's counters
// by name.
func ParseNetstat(path string, data []byte) (map[string]map[string]int64, error) {
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) == 1 && lines[0] == "" {
		return nil, syntaxError(path, 1, `a "Group: names..." line`, "")
	}
	groups := map[string]map[string]int64{}
	for i := 0; i < len(lines); i += 2 {
		names := strings.Fields(lines[i])
		if len(names) == 0 || !strings.HasSuffix(names[0], ":") {
			return nil, syntaxError(path, i+1, `a "Group: names..." line`, lines[i])
		}
		if i+1 == len(lines) {
			return nil, syntaxError(path, i+2, "a "+names[0]+" values line", "")
		}
		values := strings.Fields(lines[i+1])
		if len(values) != len(names) || values[0] != names[0] {
			return nil, syntaxError(path, i+2, fmt.Sprintf("%s and %d values", names[0], len(names)-1), lines[i+1])
		}
		group := strings.TrimSuffix(names[0], ":")
		if groups[group] == nil {
			groups[group] = map[string]int64{}
		}
		for j := 1; j < len(names); j++ {
			v, err := strconv.ParseInt(values[j], 10, 64)
			if err != nil {
				return nil, syntaxError(path, i+2, names[j]+" as a decimal number", values[j])
			}
			groups[group][names[j]] = v
		}
	}
	return groups, nil
}

// UnixSockets lists the inode of every AF_UNIX socket in net/unix, in
// the file's order: every socket of the network namespace, whoever owns
// it.
func (fs FS) UnixSockets() ([]uint64, error) {
	path := fs.Path("net/unix")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseUnixSockets(path, data)
}

// ParseUnixSockets parses net/unix text read from path: a header (Num
// RefCount Protocol Flags Type St Inode Path), then a line per socket
// whose seventh field is its inode. A socket's path may hold a newline,
// which the kernel prints as it is: a line that does not start with a
// socket's "address:" continues the one before and is passed over.
func ParseUnixSockets(path string, data []byte) ([]uint64, error) {
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if f := strings.Fields(lines[0]); len(f) < 7 || f[0] != "Num" || f[6] != "Inode" {
		return nil, syntaxError(path, 1, "the header Num RefCount Protocol Flags Type St Inode Path", lines[0])
	}
	var inodes []uint64
	for i, l := range lines[1:] {
		f := strings.Fields(l)
		if len(f) == 0 || !isAddr(f[0]) {
			continue
		}
		if len(f) < 7 {
			return nil, syntaxError(path, i+2, "7 fields or more", l)
		}
		ino, err := strconv.ParseUint(f[6], 10, 64)
		if err != nil {
			return nil, syntaxError(path, i+2, "an inode number in the seventh field", f[6])
		}
		inodes = append(inodes, ino)
	}
	return inodes, nil
}

// isAddr reports whether f is a socket line's first field: a kernel
// address in hex (zeros where hidden) and a colon.
func isAddr(f string) bool {
	hex, ok := strings.CutSuffix(f, ":")
	if !ok || hex == "" {
		return false
	}
	_, err := strconv.ParseUint(hex, 16, 64)
	return err == nil
}
