//go:build linux

package procfs

import (
	"io"
	"os"
	"strconv"
	"strings"
)

// Mapping is one line of a process's maps: "00400000-00452000 r-xp
// 00000000 08:02 173521 /usr/bin/dbus-daemon".
type Mapping struct {
	Start, End uint64 // the address range, End excluded
	Perms      string // "r-xp": read, write, execute, private or shared
	Offset     uint64 // where in the file the range starts
	Path       string // "" for anonymous memory; "[vdso]", "[heap]" and such kept
}

// Exec reports whether the mapping is executable.
func (m Mapping) Exec() bool { return len(m.Perms) > 2 && m.Perms[2] == 'x' }

// Maps reads process pid's mappings.
func (fs FS) Maps(pid int) ([]Mapping, error) { return parseFile(fs.procPath(pid, "maps"), ParseMaps) }

// ParseMaps parses maps text read from path.
func ParseMaps(path string, r io.Reader) ([]Mapping, error) {
	var out []Mapping
	err := scanLines(path, r, func(n int, line string) error {
		f := strings.Fields(line)
		if len(f) < 5 {
			return syntaxError(path, n, "range, perms, offset, device and inode", line)
		}
		lo, hi, ok := strings.Cut(f[0], "-")
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if !ok || err1 != nil || err2 != nil || end < start {
			return syntaxError(path, n, "a hex range start-end", f[0])
		}
		if len(f[1]) != 4 {
			return syntaxError(path, n, "four permission letters (r-xp)", f[1])
		}
		off, err := strconv.ParseUint(f[2], 16, 64)
		if err != nil {
			return syntaxError(path, n, "a hex offset", f[2])
		}
		m := Mapping{Start: start, End: end, Perms: f[1], Offset: off}
		if len(f) >= 6 {
			m.Path = strings.Join(f[5:], " ")
		}
		out = append(out, m)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// OpenMapped opens the file behind process pid's mapping m, while the
// process lives: map_files opens the very file mapped, even if deleted or
// in another mount namespace (it needs CAP_SYS_ADMIN); else the file at
// m's path in the process's root (its mount namespace).
func (fs FS) OpenMapped(pid int, m Mapping) (*os.File, error) {
	f, err := os.Open(fs.procPath(pid, "map_files/"+strconv.FormatUint(m.Start, 16)+"-"+strconv.FormatUint(m.End, 16)))
	if err == nil {
		return f, nil
	}
	return os.Open(fs.procPath(pid, "root") + m.Path)
}

// ReadMem reads process pid's memory in mapping m (ptrace access: the
// process's own children, or root).
func (fs FS) ReadMem(pid int, m Mapping) ([]byte, error) {
	f, err := os.Open(fs.procPath(pid, "mem"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, m.End-m.Start)
	if _, err := f.ReadAt(b, int64(m.Start)); err != nil {
		return nil, err
	}
	return b, nil
}
