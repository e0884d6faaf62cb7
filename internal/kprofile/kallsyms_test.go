//go:build linux

package kprofile

import (
	"os"
	"testing"
)

func loadFixture(t *testing.T, syms, mods string) *Kallsyms {
	t.Helper()
	f, err := os.Open(syms)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var k *Kallsyms
	if mods == "" {
		k, err = ParseKallsyms(f, nil)
	} else {
		m, err2 := os.Open(mods)
		if err2 != nil {
			t.Fatal(err2)
		}
		defer m.Close()
		k, err = ParseKallsyms(f, m)
	}
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestKallsymsFixture(t *testing.T) {
	k := loadFixture(t, "testdata/kallsyms", "testdata/modules")
	if k.Zeroed {
		t.Fatal("fixture read as hidden")
	}
	for _, c := range []struct {
		addr uint64
		want string // "" for no symbol
	}{
		{0xffffffff81000000, "_stext"}, // alias: first listed of equals
		{0xffffffff81000105, "entry_SYSCALL_64"},
		{0xffffffff81000250, ""},                 // past __entry_text_end
		{0xffffffff81001010, "__x64_sys_getpid"}, // global native entry over compat and local aliases
		{0xffffffff8100102f, "__x64_sys_getpid"},
		{0xffffffff81001050, "__seccomp_filter"},
		{0xffffffff81001500, "__seccomp_filter"}, // data symbols do not end text symbols
		{0xffffffff81001900, "do_syscall_64"},
		{0xffffffff81002000, ""}, // _etext
		{0xffffffff81050000, ""},
		{0xffffffffa0000010, "nft_do_chain [nf_tables]"},
		{0xffffffffa0000500, "nft_register_chain_type [nf_tables]"},
		{0xffffffffa0000900, ""}, // past nf_tables' 2048 bytes
		{0xffffffffa0001010, "bpf_prog_6deef7357e7b4530_sd_fw_egress [bpf]"},
		{0xffffffffa0003010, ""}, // a page past the last [bpf] symbol: unlisted JIT code
		{0xffffffffa00100ff, "xt_other [x_tables]"},
		{0xffffffffa0010100, ""},
		{0xffffffff80000000, ""}, // below everything
	} {
		s, ok := k.Lookup(c.addr)
		if got := map[bool]string{true: s.Name, false: ""}[ok]; got != c.want {
			t.Errorf("Lookup(%#x) = %q, want %q", c.addr, got, c.want)
		}
	}
	if !k.AboveCore(0xffffffffa0003010) || k.AboveCore(0xffffffff81001900) {
		t.Error("AboveCore does not split the core kernel's text from the module area")
	}
	if s, _ := k.Lookup(0xffffffffa0000010); s.Module != "nf_tables" || s.Start != 0xffffffffa0000000 {
		t.Errorf("nft_do_chain: module %q start %#x", s.Module, s.Start)
	}
}

// Without /proc/modules, a module symbol ends at the next symbol of its
// module, and the last one a page after its start.
func TestKallsymsNoModules(t *testing.T) {
	k := loadFixture(t, "testdata/kallsyms", "")
	for addr, want := range map[uint64]string{
		0xffffffffa0000900: "nft_register_chain_type [nf_tables]",
		0xffffffffa0002500: "",
		0xffffffffa0010fff: "xt_other [x_tables]",
		0xffffffffa0011000: "",
	} {
		s, ok := k.Lookup(addr)
		if got := map[bool]string{true: s.Name, false: ""}[ok]; got != want {
			t.Errorf("Lookup(%#x) = %q, want %q", addr, got, want)
		}
	}
}

func TestKallsymsHidden(t *testing.T) {
	k := loadFixture(t, "testdata/kallsyms.hidden", "")
	if !k.Zeroed {
		t.Fatal("all-zero kallsyms not reported as hidden")
	}
	if s, ok := k.Lookup(0); ok {
		t.Errorf("hidden kallsyms resolved 0 to %q", s.Name)
	}
}
