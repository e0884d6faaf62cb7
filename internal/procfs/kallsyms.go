//go:build linux

package procfs

import (
	"io"
	"strconv"
	"strings"
)

// Ksym is one line of kallsyms: "ffffffff81000000 T _stext", or a
// module's "ffffffffc0a01000 t nft_do_chain\t[nf_tables]". Addresses
// read as 0 where kptr_restrict hides them from the reader.
type Ksym struct {
	Addr   uint64
	Type   byte   // nm's letter: t or T text, w or W weak, d data, ...
	Name   string // the symbol
	Module string // the module, without brackets; "" for the core kernel
}

// Kallsyms calls each with the symbols of kallsyms in the file's order
// until each returns false.
func (fs FS) Kallsyms(each func(Ksym) bool) error {
	_, err := parseFile(fs.Path("kallsyms"), func(path string, r io.Reader) (struct{}, error) {
		return struct{}{}, ParseKallsyms(path, r, each)
	})
	return err
}

// ParseKallsyms parses kallsyms text read from path, calling each with
// every symbol until each returns false.
func ParseKallsyms(path string, r io.Reader, each func(Ksym) bool) error {
	return scanLines(path, r, func(n int, line string) error {
		f := strings.Fields(line)
		if len(f) < 3 || len(f[1]) != 1 {
			return syntaxError(path, n, "address, type letter and name", line)
		}
		addr, err := strconv.ParseUint(f[0], 16, 64)
		if err != nil {
			return syntaxError(path, n, "a hex address", f[0])
		}
		s := Ksym{Addr: addr, Type: f[1][0], Name: f[2]}
		if len(f) >= 4 && strings.HasPrefix(f[3], "[") && strings.HasSuffix(f[3], "]") && len(f[3]) >= 2 {
			s.Module = f[3][1 : len(f[3])-1]
		}
		if !each(s) {
			return errStop
		}
		return nil
	})
}

// Module is one line of modules: "name size refs deps state addr".
type Module struct {
	Name string
	Size uint64 // bytes of its core sections
	Addr uint64 // the start of its text; 0 where kptr_restrict hides it
}

// Modules reads the loaded modules.
func (fs FS) Modules() ([]Module, error) { return parseFile(fs.Path("modules"), ParseModules) }

// ParseModules parses modules text read from path.
func ParseModules(path string, r io.Reader) ([]Module, error) {
	var out []Module
	err := scanLines(path, r, func(n int, line string) error {
		f := strings.Fields(line)
		if len(f) < 6 {
			return syntaxError(path, n, "name, size, refs, deps, state and address", line)
		}
		size, err := strconv.ParseUint(f[1], 10, 64)
		if err != nil {
			return syntaxError(path, n, "a decimal size", f[1])
		}
		addr, err := strconv.ParseUint(strings.TrimPrefix(f[5], "0x"), 16, 64)
		if err != nil {
			return syntaxError(path, n, "a 0x address", f[5])
		}
		out = append(out, Module{Name: f[0], Size: size, Addr: addr})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
