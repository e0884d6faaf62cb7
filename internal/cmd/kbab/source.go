//go:build linux

package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/kbench/kbench/internal/kernelbuild"
)

// treeFlags are -tree's: kernels built from commits by kernelbuild
// (docs/builds.md, "In kbab").
type treeFlags struct {
	tree, config, cache string
	patch               [2]string // -a-patch, -b-patch
}

// readKernels are -series's or -bisect's kernels: the list file's, or
// with -tree the range's commits.
func (c *config) readKernels() ([]kernelFlags, error) {
	if c.src.tree == "" {
		b, err := os.ReadFile(c.List)
		if err != nil {
			return nil, fmt.Errorf("kernel list: %v", err)
		}
		return parseKernelList(c.List, b)
	}
	shas, err := kernelbuild.Range(c.src.tree, c.List)
	if err != nil {
		return nil, err
	}
	if len(shas) > maxKernels {
		return nil, fmt.Errorf("-tree %s: range %s has %d commits: at most %d", c.src.tree, c.List, len(shas), maxKernels)
	}
	var ks []kernelFlags
	for _, sha := range shas {
		ks = append(ks, kernelFlags{label: sha[:12], image: sha, from: "commit " + sha[:12]})
	}
	return ks, nil
}

// resolveTree turns each kernel's revision into its build.
func (c *config) resolveTree(given map[string]bool) error {
	if c.src.tree == "" {
		for _, f := range []string{"config", "build-cache", "a-patch", "b-patch"} {
			if given[f] {
				return fmt.Errorf("-%s goes with -tree: it says how kbuild builds a commit", f)
			}
		}
		return nil
	}
	if c.List != "" && (c.src.patch[0] != "" || c.src.patch[1] != "") {
		return errors.New("-a-patch and -b-patch are an A/B's: a range's kernels are its commits")
	}
	for i := range c.kernels {
		k := &c.kernels[i]
		s := kernelbuild.Spec{Tree: c.src.tree, Commit: k.image, Config: c.src.config, Cache: c.src.cache}
		if c.List == "" && c.src.patch[i] != "" {
			s.Patches = []string{c.src.patch[i]}
		}
		b, err := kernelbuild.Resolve(s)
		if err != nil {
			return fmt.Errorf("%s: %v", k.from, err)
		}
		k.build, k.image = b, b.Image()
	}
	return nil
}

// buildAll builds every kernel but a bisection's images between good
// and bad (its search builds those it visits).
func (c *config) buildAll(w io.Writer) error {
	for k := range c.kernels {
		if c.Design == "bisect" && k > 0 && k < len(c.kernels)-1 {
			continue
		}
		if err := c.image(k, w); err != nil {
			return err
		}
	}
	return nil
}

// image makes kernel k's image where it is a commit not yet built (a
// *kernelbuild.Failed where it does not build).
func (c *config) image(k int, w io.Writer) error {
	if b := c.kernels[k].build; b != nil {
		_, err := b.Make(w)
		return err
	}
	return nil
}
