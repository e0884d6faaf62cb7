//go:build linux

// Package seccompfilter holds classic-BPF seccomp filters in the form
// seccomp(2) takes, assembled once outside any timed loop, and says
// whether a filter's answer depends on the call's arguments: the one
// property that decides whether the kernel (5.11+) may answer from its
// per-task action cache or must run the filter on every system call.
// seccompbench and the seccompexec tool build their filters here.
package seccompfilter

import (
	"fmt"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// Offsets in struct seccomp_data. A filter that loads only nr and arch
// keeps the kernel's action cache usable.
const (
	OffNr      = 0
	OffArch    = 4
	OffArgs0Lo = 16 // low word of args[0] on little-endian machines
)

// LoadArgs0 loads args[0]'s low word: put first in a filter, it makes the
// filter's answer depend on the arguments without changing it.
var LoadArgs0 bpf.Instruction = bpf.LoadAbsolute{Off: OffArgs0Lo, Size: 4}

// Program is an assembled filter.
type Program struct {
	Insns []bpf.Instruction
	raw   []unix.SockFilter
	fprog unix.SockFprog
}

// Assemble turns insns into a Program.
func Assemble(insns []bpf.Instruction) (*Program, error) {
	raw, err := bpf.Assemble(insns)
	if err != nil {
		return nil, err
	}
	if len(raw) == 0 {
		return nil, fmt.Errorf("empty filter")
	}
	p := &Program{Insns: insns, raw: make([]unix.SockFilter, len(raw))}
	for i, r := range raw {
		p.raw[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	p.fprog = unix.SockFprog{Len: uint16(len(p.raw)), Filter: &p.raw[0]}
	return p, nil
}

// FromPolicy assembles a go-seccomp-bpf policy, after prefix.
func FromPolicy(policy seccomp.Policy, prefix ...bpf.Instruction) (*Program, error) {
	insns, err := policy.Assemble()
	if err != nil {
		return nil, fmt.Errorf("assembling seccomp policy: %w", err)
	}
	return Assemble(append(prefix, insns...))
}

// Len is the instruction count the kernel translates and JIT-compiles.
func (p *Program) Len() int { return len(p.raw) }

// Raw is the program as the kernel reads it.
func (p *Program) Raw() []unix.SockFilter { return p.raw }

// Fprog is the struct sock_fprog to pass to seccomp(2) or prctl(2); it
// points into p, so p must outlive the call.
func (p *Program) Fprog() *unix.SockFprog { return &p.fprog }

// ReadsArgs reports whether the filter loads anything but nr and arch,
// which makes its answer depend on the call's arguments: the kernel must
// then run it on every system call instead of answering from its cache.
func (p *Program) ReadsArgs() bool {
	for _, in := range p.Insns {
		switch in := in.(type) {
		case bpf.LoadAbsolute:
			if in.Off != OffNr && in.Off != OffArch {
				return true
			}
		case bpf.LoadIndirect, bpf.LoadMemShift:
			return true
		}
	}
	return false
}
