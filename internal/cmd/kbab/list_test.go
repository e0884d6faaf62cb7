//go:build linux

package main

import (
	"strings"
	"testing"
)

func TestParseKernelList(t *testing.T) {
	ks, err := parseKernelList("/l/k.list", []byte("# good to bad\n\nv100 boot/vmlinuz-100\r\nv107\t/abs/vmlinuz-107  mitigations=off  quiet\n  # a comment\nv107h /abs/vmlinuz-107 sysctl.net.core.bpf_jit_harden=2\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []kernelFlags{
		{"v100", "/l/boot/vmlinuz-100", "", "/l/k.list line 3", nil},
		{"v107", "/abs/vmlinuz-107", "mitigations=off quiet", "/l/k.list line 4", nil},
		{"v107h", "/abs/vmlinuz-107", "sysctl.net.core.bpf_jit_harden=2", "/l/k.list line 6", nil},
	}
	if len(ks) != len(want) {
		t.Fatalf("%d kernels, want %d: %+v", len(ks), len(want), ks)
	}
	for i := range want {
		if ks[i] != want[i] {
			t.Errorf("kernel %d: %+v, want %+v", i, ks[i], want[i])
		}
	}
	for in, msg := range map[string]string{
		"":                         "0 kernels: want 2 or more",
		"a x\n":                    "1 kernels: want 2 or more",
		"a x\nb\n":                 `line 2: "b": want LABEL IMAGE`,
		"a x\na y\n":               `line 2: label "a" is line 1's too`,
		"a x\n../b y\n":            `line 2: label "../b": want 1 to 64 letters`,
		"a x\n-b y\n":              `line 2: label "-b"`,
		strings.Repeat("k x\n", 1): "1 kernels",
	} {
		if _, err := parseKernelList("k.list", []byte(in)); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: %v, want %q", in, err, msg)
		}
	}
}

// Any bytes as a kernel list: kernels with labels of their own that
// name a file, or an error naming the list and the line.
func FuzzKernelList(f *testing.F) {
	f.Add([]byte("K1 /k/vmlinuz\nK2 /k/vmlinuz mitigations=off\n"))
	f.Add([]byte("# c\n\nv1 a\r\nv2\tb x=1 y\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ks, err := parseKernelList("k.list", b)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "k.list") {
				t.Fatalf("error %q does not name the list", err)
			}
			return
		}
		if len(ks) < 2 {
			t.Fatalf("%d kernels accepted", len(ks))
		}
		seen := map[string]bool{}
		for _, k := range ks {
			if checkLabel(k.label) != nil || seen[k.label] || k.image == "" || strings.ContainsAny(k.append, "\n\r") {
				t.Fatalf("kernel %+v accepted", k)
			}
			seen[k.label] = true
		}
	})
}
