//go:build linux

package kprofile

import (
	"debug/elf"
	"debug/gosym"
	"fmt"
	"io"
	"path/filepath"
	"sort"

	"github.com/kbench/kbench/internal/procfs"
)

// mapping is one executable line of /proc/PID/maps.
type mapping = procfs.Mapping

// execMaps keeps the executable mappings of a process's maps.
func execMaps(ms []procfs.Mapping, err error) ([]mapping, error) {
	if err != nil {
		return nil, err
	}
	var out []mapping
	for _, m := range ms {
		if m.Exec() {
			out = append(out, m)
		}
	}
	return out, nil
}

// find returns the mapping holding addr.
func findMapping(ms []mapping, addr uint64) (mapping, bool) {
	for _, m := range ms {
		if addr >= m.Start && addr < m.End {
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
	name := m.Path
	if name == "" {
		name = "[anon]"
	}
	return fmt.Sprintf("[unknown] %s+%#x", filepath.Base(name), addr-m.Start+m.Offset)
}
