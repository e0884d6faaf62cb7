//go:build linux

package main

import (
	"strings"
	"testing"
)

// Bad options stop with exit 2, naming the option, before any build
// (package kernelbuild's tests build the fake tree).
func TestBadOptions(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "-tree: want a git repository"},
		{[]string{"-tree", t.TempDir()}, "no kernel Makefile"},
		{[]string{"-tree", ".", "extra"}, `["extra"]: no arguments after the flags`},
		{[]string{"-j", "x"}, `invalid value "x" for flag -j`},
	} {
		var out, errs strings.Builder
		if code := run(c.args, &out, &errs); code != 2 || out.Len() > 0 || !strings.Contains(errs.String(), c.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2 naming %q", c.args, code, out.String(), errs.String(), c.want)
		}
	}
}
