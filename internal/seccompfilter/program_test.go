//go:build linux

package seccompfilter

import (
	"testing"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

func TestReadsArgs(t *testing.T) {
	ret := bpf.RetConstant{Val: unix.SECCOMP_RET_ALLOW}
	for _, c := range []struct {
		name  string
		insns []bpf.Instruction
		want  bool
	}{
		{"ret only", []bpf.Instruction{ret}, false},
		{"nr and arch", []bpf.Instruction{bpf.LoadAbsolute{Off: OffArch, Size: 4}, bpf.LoadAbsolute{Off: OffNr, Size: 4}, ret}, false},
		{"args[0]", []bpf.Instruction{LoadArgs0, ret}, true},
		{"instruction pointer", []bpf.Instruction{bpf.LoadAbsolute{Off: 8, Size: 4}, ret}, true},
		{"indirect", []bpf.Instruction{bpf.LoadIndirect{Off: 0, Size: 4}, ret}, true},
	} {
		p, err := Assemble(c.insns)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := p.ReadsArgs(); got != c.want {
			t.Errorf("%s: ReadsArgs = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestAssemble(t *testing.T) {
	if _, err := Assemble(nil); err == nil {
		t.Error("empty filter assembled")
	}
	p, err := FromPolicy(seccomp.Policy{
		DefaultAction: seccomp.ActionAllow,
		Syscalls:      []seccomp.SyscallGroup{{Action: seccomp.ActionErrno, Names: []string{"reboot"}}},
	}, LoadArgs0)
	if err != nil {
		t.Fatal(err)
	}
	f := p.Fprog()
	if int(f.Len) != p.Len() || f.Filter != &p.Raw()[0] {
		t.Fatalf("sock_fprog {%d, %p} does not describe the %d instructions at %p", f.Len, f.Filter, p.Len(), &p.Raw()[0])
	}
	first := p.Raw()[0]
	if first.Code != unix.BPF_LD|unix.BPF_W|unix.BPF_ABS || first.K != OffArgs0Lo {
		t.Errorf("first instruction %+v, want the prefix's load of args[0]", first)
	}
	if !p.ReadsArgs() {
		t.Error("a policy after LoadArgs0 does not read arguments")
	}
}
