//go:build linux

package seccompbench

import (
	"fmt"
	"slices"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"

	"github.com/kbench/kbench/internal/seccompfilter"
)

// MaxHuge is the largest filter the kernel accepts (BPF_MAXINSNS).
const MaxHuge = 4096

// hugeSizes are the sizes stress-ng's huge-filter search tries, in order,
// on a kernel whose limit is BPF_MAXINSNS: it doubles from 32 while loads
// succeed, then halves the step between the last success and the first
// failure. 32..4096 succeed (8 loads); the 13 larger sizes fail, each
// tried with seccomp(2) and then prctl(2).
var hugeSizes = func() []int {
	var sizes []int
	n, max := 32, 1
	for j := 0; n < 65535 && n != max && j < 64; j++ {
		sizes = append(sizes, n)
		if n <= MaxHuge {
			max, n = n, n+n
		} else {
			n = max + (n-max)>>1
		}
	}
	return sizes
}()

// hugeAllow is one buffer of `ret ALLOW` instructions, long enough for the
// largest size tried; each huge filter is a prefix of it.
var hugeAllow = func() []unix.SockFilter {
	p, err := seccompfilter.Assemble(hugeProgram(slices.Max(hugeSizes)))
	if err != nil {
		panic(err) // a constant program; cannot fail
	}
	return p.Raw()
}()

// neverCalled are system calls neither the Go runtime nor the benchmark
// makes. stress-ng's small filter allows a short list and traps the rest,
// which would kill a Go thread; ours denies these with EPERM and allows the
// rest, in about the same number of instructions.
var neverCalled = []string{"acct", "swapon", "swapoff", "reboot", "kexec_load", "init_module", "delete_module"}

// smallFilters are the two shapes of stress-ng's allow-list filter (12 and
// 14 instructions there), built with go-seccomp-bpf: arch check, x32
// check, one compare per listed call.
func smallFilters() ([2]*seccompfilter.Program, error) {
	var out [2]*seccompfilter.Program
	for i, n := range []int{5, 7} {
		p, err := seccompfilter.FromPolicy(seccomp.Policy{
			DefaultAction: seccomp.ActionAllow,
			Syscalls: []seccomp.SyscallGroup{{
				Action: seccomp.ActionErrno,
				Names:  neverCalled[:n],
			}},
		})
		if err != nil {
			return out, err
		}
		out[i] = p
	}
	return out, nil
}

// Kind is how a BenchmarkSyscall filter decides.
type Kind string

const (
	// Cached filters read only nr and arch: since Linux 5.11 the kernel
	// answers allowed calls from its per-task cache without running them.
	Cached Kind = "cached"
	// Full filters also read args[0], so every filter runs on every call,
	// as all filters did before 5.11 (report 001 ran 5.7).
	Full Kind = "full"
)

// sentinel is the call every BenchmarkSyscall filter denies, with its own
// index as the errno: the kernel reports the newest filter's answer, so
// getppid failing with errno N proves filter N is on the thread.
const sentinel = unix.SYS_GETPPID

// syscallFilter builds filter number index (1-based) of kind k: identical
// rules in every filter, as in report 001, apart from the errno.
func syscallFilter(k Kind, index int) (*seccompfilter.Program, error) {
	var prefix []bpf.Instruction
	switch k {
	case Cached:
	case Full:
		prefix = []bpf.Instruction{seccompfilter.LoadArgs0}
	default:
		return nil, fmt.Errorf("unknown filter kind %q", k)
	}
	if index < 1 || index > 4095 {
		return nil, fmt.Errorf("filter index %d outside 1..4095 (SECCOMP_RET_DATA errno)", index)
	}
	return seccompfilter.FromPolicy(seccomp.Policy{
		DefaultAction: seccomp.ActionAllow,
		Syscalls: []seccomp.SyscallGroup{{
			Action: seccomp.ActionErrno | seccomp.Action(index),
			Names:  []string{"getppid"},
		}},
	}, prefix...)
}

// hugeProgram is stress-ng's huge filter as instructions: n `ret ALLOW`.
func hugeProgram(n int) []bpf.Instruction {
	insns := make([]bpf.Instruction, n)
	for i := range insns {
		insns[i] = bpf.RetConstant{Val: unix.SECCOMP_RET_ALLOW}
	}
	return insns
}
