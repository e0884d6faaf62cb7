//go:build linux

package kprofile

import (
	"bufio"
	"debug/elf"
	"debug/gosym"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// mapping is one executable line of /proc/PID/maps.
type mapping struct {
	start, end, offset uint64
	path               string // "" for anonymous; "[vdso]" and such kept
}

// parseMaps reads /proc/PID/maps text, keeping executable mappings.
func parseMaps(r io.Reader) ([]mapping, error) {
	var out []mapping
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		// "00400000-00452000 r-xp 00000000 08:02 173521      /usr/bin/dbus-daemon"
		f := strings.Fields(sc.Text())
		if len(f) < 5 || len(f[1]) < 3 || f[1][2] != 'x' {
			continue
		}
		lo, hi, ok := strings.Cut(f[0], "-")
		if !ok {
			return nil, fmt.Errorf("maps line %q: no range", sc.Text())
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		off, err3 := strconv.ParseUint(f[2], 16, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			return nil, fmt.Errorf("maps line %q: bad numbers", sc.Text())
		}
		m := mapping{start: start, end: end, offset: off}
		if len(f) >= 6 {
			m.path = strings.Join(f[5:], " ")
		}
		out = append(out, m)
	}
	return out, sc.Err()
}

// find returns the mapping holding addr.
func findMapping(ms []mapping, addr uint64) (mapping, bool) {
	for _, m := range ms {
		if addr >= m.start && addr < m.end {
			return m, true
		}
	}
	return mapping{}, false
}

// elfSyms is one ELF file's function symbols and load segments.
type elfSyms struct {
	funcs []elfFunc // sorted by addr
	loads []elf.ProgHeader
	// gosym names a Go binary's functions from its .gopclntab, which
	// go test's binaries keep though they are linked without .symtab.
	gosym *gosym.Table
	err   error // why the file gave no symbols
}

type elfFunc struct {
	addr, size uint64
	name       string
}

// readELF reads an ELF file's .symtab, or its .dynsym where stripped.
func readELF(r io.ReaderAt, path string) *elfSyms {
	e := &elfSyms{}
	f, err := elf.NewFile(r)
	if err != nil {
		e.err = err
		return e
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			e.loads = append(e.loads, p.ProgHeader)
		}
	}
	if pcln, text := f.Section(".gopclntab"), f.Section(".text"); pcln != nil && text != nil {
		if data, err := pcln.Data(); err == nil {
			if t, err := gosym.NewTable(nil, gosym.NewLineTable(data, text.Addr)); err == nil {
				e.gosym = t
				return e
			}
		}
	}
	syms, err := f.Symbols()
	if err != nil || len(syms) == 0 {
		syms, err = f.DynamicSymbols()
	}
	if err != nil {
		e.err = fmt.Errorf("%s has no symbol table: %v", path, err)
		return e
	}
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Value == 0 {
			continue
		}
		e.funcs = append(e.funcs, elfFunc{addr: s.Value, size: s.Size, name: s.Name})
	}
	sort.Slice(e.funcs, func(i, j int) bool { return e.funcs[i].addr < e.funcs[j].addr })
	return e
}

// lookup resolves a file offset (from a mapping) to a function name, and
// for Go code its file and line.
func (e *elfSyms) lookup(fileOff uint64) (name, file string, line int, ok bool) {
	var vaddr uint64
	found := false
	for _, p := range e.loads {
		if fileOff >= p.Off && fileOff < p.Off+p.Filesz {
			vaddr, found = fileOff-p.Off+p.Vaddr, true
			break
		}
	}
	if !found {
		return "", "", 0, false
	}
	if e.gosym != nil {
		fn := e.gosym.PCToFunc(vaddr)
		if fn == nil {
			return "", "", 0, false
		}
		file, line, _ := e.gosym.PCToLine(vaddr)
		return fn.Name, file, line, true
	}
	i := sort.Search(len(e.funcs), func(i int) bool { return e.funcs[i].addr > vaddr }) - 1
	if i < 0 {
		return "", "", 0, false
	}
	f := e.funcs[i]
	if f.size != 0 && vaddr >= f.addr+f.size {
		return "", "", 0, false
	}
	if f.size == 0 && vaddr-f.addr > 1<<16 {
		return "", "", 0, false
	}
	return f.name, "", 0, true
}

// unknownName names an address no symbol covers, as perf does: the
// mapping's file and the offset in it.
func unknownName(m mapping, ok bool, addr uint64) string {
	if !ok {
		// Most often a frame pointer chain walked through code built
		// without frame pointers: the address is garbage.
		return "[unknown]"
	}
	name := m.path
	if name == "" {
		name = "[anon]"
	}
	return fmt.Sprintf("[unknown] %s+%#x", filepath.Base(name), addr-m.start+m.offset)
}
