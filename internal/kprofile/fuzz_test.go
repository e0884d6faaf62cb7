//go:build linux

package kprofile

import (
	"testing"
)

// FuzzFileName checks that ParseFileName accepts exactly the names
// FileName writes, and gives back what made them.
func FuzzFileName(f *testing.F) {
	f.Add("seccompbench.Syscall_work-getpid_kind-full_filters-32-2.run1.pb.gz")
	f.Add("netbench.TCPCRR_size-1.5.run12.pb.gz")
	f.Add("x.y.run0.pb.gz")
	f.Add("x..run1.pb.gz")
	f.Add("x.y.run01.pb.gz")
	f.Add(".y.run1.pb.gz")
	f.Fuzz(func(t *testing.T, name string) {
		pkg, stem, run, ok := ParseFileName(name)
		if !ok {
			return
		}
		if got := FileName(pkg, stem, run); got != name {
			t.Fatalf("ParseFileName(%q) = %q, %q, %d, which FileName writes as %q", name, pkg, stem, run, got)
		}
		if RowStem(stem) != stem || run < 1 {
			t.Fatalf("ParseFileName(%q) gave stem %q run %d, which FileName never writes", name, stem, run)
		}
	})
}

// FuzzHeader checks that parseHeader reads exactly the comments
// Sampling.header writes.
func FuzzHeader(f *testing.F) {
	f.Add(Sampling{"cpu-clock", 4000, "system-wide"}.Header())
	f.Add(Sampling{"cycles", 1000, "process"}.Header())
	f.Add("kbench kernel profile: cycles sampled at 04000 Hz, x, idle excluded, timed region only")
	f.Fuzz(func(t *testing.T, c string) {
		s, ok := parseHeader(c)
		if ok && s.Header() != c {
			t.Fatalf("parseHeader(%q) = %+v, which header writes as %q", c, s, s.Header())
		}
	})
}

// FuzzOps checks that parseOps reads exactly the comments OpsComment
// writes.
func FuzzOps(f *testing.F) {
	f.Add(OpsComment(1))
	f.Add(OpsComment(1 << 40))
	f.Add("kbench ops: 012 (the run's b.N: the operations its timed region covers)")
	f.Add("kbench ops: 0 (the run's b.N: the operations its timed region covers)")
	f.Fuzz(func(t *testing.T, c string) {
		n, ok := parseOps(c)
		if ok && (n < 1 || OpsComment(n) != c) {
			t.Fatalf("parseOps(%q) = %d, which OpsComment writes as %q", c, n, OpsComment(n))
		}
	})
}
