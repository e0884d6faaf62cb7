//go:build linux

// Command kbuild builds the kernel image kbench's guests boot, from a
// kernel source tree at a commit, plus patches, and prints its path:
//
//	go run ./internal/cmd/kbuild -tree ~/linux [-commit REV] [-patch FILE]...
//	    [-config defconfig|running|FILE] [-cache DIR] [-j N]
//
// The base config is merged with kvm_guest.config and the options every
// row needs (package kernelbuild: seccomp filters, the BPF JIT, unix
// sockets, veth, perf events, vmexec's console and initramfs), checked,
// and built out of tree; the tree is only read. Images are cached by the
// commit's tree, the patches, the config and the compiler, so a repeated
// build is a lookup and another commit rebuilds what make rebuilds
// (ccache where present). Progress goes to stderr; stdout is the image's
// path alone, for `vmexec -kernel "$(kbuild ...)"`. kbab builds with the
// same package where given -tree.
//
// Exit status: 0 built, 1 the commit does not build (the message names
// it and the compiler's first error), 2 bad options or a setup that
// cannot build.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/kbench/kbench/internal/kernelbuild"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// patches is a repeatable -patch.
type patches []string

func (p *patches) String() string     { return fmt.Sprint(*p) }
func (p *patches) Set(v string) error { *p = append(*p, v); return nil }

func run(args []string, stdout, stderr io.Writer) int {
	var s kernelbuild.Spec
	fs := flag.NewFlagSet("kbuild", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&s.Tree, "tree", "", "kernel source: a git repository `dir`ectory (only read), or a source tarball such as /usr/src/linux-source-6.1.tar.xz (imported once as one commit)")
	fs.StringVar(&s.Commit, "commit", "HEAD", "the `revision` to build")
	fs.Var((*patches)(&s.Patches), "patch", "a patch `file` to apply on the commit (repeatable, in order)")
	fs.StringVar(&s.Config, "config", "defconfig", "base `config`: defconfig (the tree's), running (this kernel's) or a config file")
	fs.StringVar(&s.Cache, "cache", "", "cache `dir`ectory of checkouts, objects and images (default the user's cache dir's kbench/kbuild)")
	fs.IntVar(&s.Jobs, "j", 0, "make `jobs` (0: one a CPU)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "kbuild: %q: no arguments after the flags\n", fs.Args())
		return 2
	}
	b, err := kernelbuild.Resolve(s)
	if err != nil {
		fmt.Fprintf(stderr, "kbuild: %v\n", err)
		return 2
	}
	img, err := b.Make(stderr)
	if err != nil {
		fmt.Fprintf(stderr, "kbuild: %v\n", err)
		var f *kernelbuild.Failed
		if errors.As(err, &f) {
			return 1
		}
		return 2
	}
	fmt.Fprintln(stdout, img)
	return 0
}
