//go:build linux

package kprofile

import (
	"io"
	"sort"
	"strings"

	"github.com/kbench/kbench/internal/procfs"
)

// Kallsyms resolves kernel text addresses to function names, from
// /proc/kallsyms (with module names, "func [module]") and /proc/modules
// (each module's extent, so an address past a module's last symbol is not
// given to it). Symbols have no sizes there: a symbol covers the addresses
// up to the next one, within the core kernel's text (_stext to _etext, or
// the init and entry sections around it) or its module.
type Kallsyms struct {
	syms    []ksym          // sorted by addr
	ends    []uint64        // core text section end markers, sorted
	coreEnd uint64          // the highest core kernel text address listed
	modules []procfs.Module // with known addresses
	// Zeroed is true when every address read as 0: kptr_restrict hides
	// them from this user, and nothing can be resolved.
	Zeroed bool
}

type ksym struct {
	addr   uint64
	name   string
	module string // "" for the core kernel
	global bool   // T or W, not t or w
}

// Symbol is a resolved kernel address.
type Symbol struct {
	Name   string // e.g. "__seccomp_filter", or "nf_hook_slow [nf_tables]"
	Module string
	Start  uint64
}

// textEnds are the core kernel's text section end markers: labels, not
// functions.
var textEnds = map[string]bool{
	"_etext": true, "_einittext": true, "__entry_text_end": true,
	"__irqentry_text_end": true, "__softirqentry_text_end": true,
}

// ParseKallsyms reads /proc/kallsyms text and, if modules is non-nil,
// /proc/modules text. Only text symbols (t, T, w, W) are kept.
func ParseKallsyms(kallsyms io.Reader, modules io.Reader) (*Kallsyms, error) {
	var mods []procfs.Module
	if modules != nil {
		var err error
		if mods, err = procfs.ParseModules("modules", modules); err != nil {
			return nil, err
		}
	}
	return buildKallsyms(func(each func(procfs.Ksym) bool) error {
		return procfs.ParseKallsyms("kallsyms", kallsyms, each)
	}, mods)
}

// buildKallsyms builds the table from the symbols read gives and the
// loaded modules.
func buildKallsyms(read func(each func(procfs.Ksym) bool) error, mods []procfs.Module) (*Kallsyms, error) {
	k := &Kallsyms{}
	zero, total := 0, 0
	err := read(func(sym procfs.Ksym) bool {
		total++
		if sym.Addr == 0 {
			zero++
		}
		switch sym.Type {
		case 't', 'T', 'w', 'W':
		default:
			return true
		}
		if textEnds[sym.Name] {
			k.ends = append(k.ends, sym.Addr)
			return true
		}
		k.syms = append(k.syms, ksym{addr: sym.Addr, name: sym.Name, module: sym.Module, global: sym.Type == 'T' || sym.Type == 'W'})
		return true
	})
	if err != nil {
		return nil, err
	}
	if total > 0 && zero == total {
		k.Zeroed = true
		k.syms = nil
	}
	sort.SliceStable(k.syms, func(i, j int) bool { return k.syms[i].addr < k.syms[j].addr })
	k.syms = dedupe(k.syms)
	sort.Slice(k.ends, func(i, j int) bool { return k.ends[i] < k.ends[j] })
	for _, s := range k.syms {
		if s.module == "" {
			k.coreEnd = max(k.coreEnd, s.addr)
		}
	}
	for _, e := range k.ends {
		k.coreEnd = max(k.coreEnd, e)
	}
	for _, m := range mods {
		if m.Addr != 0 { // 0: hidden by kptr_restrict
			k.modules = append(k.modules, m)
		}
	}
	return k, nil
}

// dedupe keeps one name per address of sorted syms. Of aliases (a
// syscall's __x64_sys_, __ia32_sys_ and __do_sys_ entries), it keeps, as
// perf does, a global symbol over a local one, then the one with fewer
// leading underscores, then the first listed; on x86_64 the ia32 compat
// entry points lose to the native ones they alias.
func dedupe(syms []ksym) []ksym {
	out := syms[:0]
	for _, s := range syms {
		if n := len(out); n > 0 && out[n-1].addr == s.addr {
			if better(s, out[n-1]) {
				out[n-1] = s
			}
			continue
		}
		out = append(out, s)
	}
	return out
}

func better(a, b ksym) bool {
	if a.global != b.global {
		return a.global
	}
	if ca, cb := strings.HasPrefix(a.name, "__ia32_"), strings.HasPrefix(b.name, "__ia32_"); ca != cb {
		return cb
	}
	ua := len(a.name) - len(strings.TrimLeft(a.name, "_"))
	ub := len(b.name) - len(strings.TrimLeft(b.name, "_"))
	return ua < ub
}

// Lookup resolves addr. ok is false where no symbol covers it: hidden
// addresses, or code kallsyms does not list (classic BPF programs such
// as seccomp filters, JIT'd without a kallsyms entry).
func (k *Kallsyms) Lookup(addr uint64) (Symbol, bool) {
	i := sort.Search(len(k.syms), func(i int) bool { return k.syms[i].addr > addr }) - 1
	if i < 0 {
		return Symbol{}, false
	}
	s := k.syms[i]
	if !k.covers(s, i, addr) {
		return Symbol{}, false
	}
	name := s.name
	if s.module != "" {
		name += " [" + s.module + "]"
	}
	return Symbol{Name: name, Module: s.module, Start: s.addr}, true
}

// AboveCore reports whether addr lies above the core kernel's text, in
// the area where modules, trampolines and JIT'd BPF programs are placed.
func (k *Kallsyms) AboveCore(addr uint64) bool {
	return k.coreEnd != 0 && addr > k.coreEnd
}

// covers reports whether addr, at or above symbol s (index i), belongs
// to it rather than to unlisted code after it.
func (k *Kallsyms) covers(s ksym, i int, addr uint64) bool {
	if s.module != "" {
		for _, m := range k.modules {
			if m.Name == s.module {
				return addr < m.Addr+m.Size
			}
		}
		// No extent (no /proc/modules, or a pseudo-module such as
		// [bpf] or [__builtin__ftrace]): up to the next symbol of the
		// same module only, and never past one page.
		if j := i + 1; j < len(k.syms) && k.syms[j].module == s.module {
			return addr < k.syms[j].addr
		}
		return addr-s.addr < 4096
	}
	// Core kernel: the text sections' end markers bound the last
	// symbol of each; the next symbol bounds the others.
	if e := sort.Search(len(k.ends), func(e int) bool { return k.ends[e] > s.addr }); e < len(k.ends) && addr >= k.ends[e] {
		return false
	}
	if j := i + 1; j < len(k.syms) {
		next := k.syms[j]
		if next.module != "" {
			// The core kernel's last text symbol before the module area:
			// no end known; allow one page, as for pseudo-modules.
			return addr-s.addr < 4096
		}
		return addr < next.addr
	}
	return addr-s.addr < 4096
}
