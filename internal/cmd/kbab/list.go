//go:build linux

package main

import (
	"fmt"
	"path/filepath"
	"strings"
)

// maxKernels bounds a list: more is more boots than a sitting holds.
const maxKernels = 64

// parseKernelList parses a kernel list (docs/kbab.md has the format).
func parseKernelList(p string, b []byte) ([]kernelFlags, error) {
	var ks []kernelFlags
	seen := map[string]int{}
	for n, line := range strings.Split(string(b), "\n") {
		from := fmt.Sprintf("%s line %d", p, n+1)
		line = strings.TrimSuffix(line, "\r")
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if len(f) < 2 {
			return nil, fmt.Errorf("%s: %q: want LABEL IMAGE [cmdline args...]", from, line)
		}
		if err := checkLabel(f[0]); err != nil {
			return nil, fmt.Errorf("%s: %v", from, err)
		}
		if j, dup := seen[f[0]]; dup {
			return nil, fmt.Errorf("%s: label %q is line %d's too: want a label a kernel (an image may repeat, with another cmdline)", from, f[0], j)
		}
		seen[f[0]] = n + 1
		img := f[1]
		if !filepath.IsAbs(img) {
			img = filepath.Join(filepath.Dir(p), img)
		}
		ks = append(ks, kernelFlags{label: f[0], image: img, append: strings.Join(f[2:], " "), from: from})
		if len(ks) > maxKernels {
			return nil, fmt.Errorf("%s: more than %d kernels", from, maxKernels)
		}
	}
	if len(ks) < 2 {
		return nil, fmt.Errorf("%s: %d kernels: want 2 or more, a line each (LABEL IMAGE [cmdline args...])", p, len(ks))
	}
	return ks, nil
}
