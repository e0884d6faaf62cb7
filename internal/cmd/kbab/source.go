//go:build linux

package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/kbench/kbench/internal/kernelbuild"
	"github.com/kbench/kbench/internal/vmflags"
)

// treeFlags are -tree's: kernels built from commits of a source tree
// (plus a patch) by package kernelbuild into its cache, kbab.json's
// sha256 of each its build key (docs/builds.md, "In kbab").
type treeFlags struct {
	tree, config, cache string
	patch               [2]string // -a-patch, -b-patch
}

// readKernels are -series's or -bisect's kernels: the list file's, or
// with -tree the range's commits.
func (c *config) readKernels() ([]kernelFlags, error) {
	if c.src.tree == "" {
		return readKernelList(c.list)
	}
	shas, err := kernelbuild.Range(c.src.tree, c.list)
	if err != nil {
		return nil, err
	}
	if len(shas) > maxKernels {
		return nil, fmt.Errorf("-tree %s: range %s has %d commits: at most %d", c.src.tree, c.list, len(shas), maxKernels)
	}
	var ks []kernelFlags
	for _, sha := range shas {
		ks = append(ks, kernelFlags{label: sha[:12], image: sha, from: "commit " + sha[:12]})
	}
	return ks, nil
}

// resolveTree turns each kernel's revision into its build, after the
// flags are checked and before anything is built.
func (c *config) resolveTree(given map[string]bool) error {
	if c.src.tree == "" {
		for _, f := range []string{"config", "build-cache", "a-patch", "b-patch"} {
			if given[f] {
				return fmt.Errorf("-%s goes with -tree: it says how kbuild builds a commit", f)
			}
		}
		return nil
	}
	if c.list != "" && (c.src.patch[0] != "" || c.src.patch[1] != "") {
		return errors.New("-a-patch and -b-patch are an A/B's: a range's kernels are its commits")
	}
	for i := range c.kernels {
		k := &c.kernels[i]
		s := kernelbuild.Spec{Tree: c.src.tree, Commit: k.image, Config: c.src.config, Cache: c.src.cache}
		if c.list == "" && c.src.patch[i] != "" {
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

// buildAll builds what must be built before the first boot: every
// kernel, but a bisection's images between good and bad (its search
// builds those it visits: image).
func (c *config) buildAll(w io.Writer) error {
	for k := range c.kernels {
		if c.design == "bisect" && k > 0 && k < len(c.kernels)-1 {
			continue
		}
		if err := c.image(k, w); err != nil {
			return err
		}
	}
	return nil
}

// image makes kernel k's image where it is a commit not yet built: the
// one "image for this point" of every design. A commit that does not
// build is a *kernelbuild.Failed.
func (c *config) image(k int, w io.Writer) error {
	if b := c.kernels[k].build; b != nil {
		_, err := b.Make(w)
		return err
	}
	return nil
}

// checkImage checks kernel k's image as vmexec will, where it is a
// file now (a commit's is checked once built).
func (k kernelFlags) checkImage(flagName string) error {
	if k.build != nil {
		return nil
	}
	return vmflags.Kernel(flagName, k.image)
}

// digest identifies kernel k's image in kbab.json: its contents' SHA-256,
// or a commit's build key.
func (k kernelFlags) digest(img string) (string, error) {
	if k.build != nil {
		return k.build.Key, nil
	}
	return vmflags.ImageDigest(img)
}
