//go:build linux

package main

import (
	"cmp"
	"debug/elf"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kbench/kbench/internal/vmflags"
	"github.com/u-root/u-root/pkg/cpio"
	"github.com/u-root/u-root/pkg/ldd"
)

// maxTree bounds the package directory copied into the guest: go test's
// working directory is a package, not a home directory.
const maxTree = 256 << 20

// initramfs collects the guest's root file system before it is written
// as a newc cpio archive. The first error of an addition sticks (err), so
// that a run of them needs one check.
type initramfs struct {
	recs map[string]cpio.Record // by normalized name
	size int64
	err  error
}

func newInitramfs() *initramfs { return &initramfs{recs: map[string]cpio.Record{}} }

func (ir *initramfs) has(name string) bool {
	_, ok := ir.recs[cpio.Normalize(name)]
	return ok
}

// add puts a record in, with its parent directories (0755, root).
func (ir *initramfs) add(r cpio.Record) {
	r.Name = cpio.Normalize(r.Name)
	for d := path.Dir(r.Name); d != "." && d != "/"; d = path.Dir(d) {
		if !ir.has(d) {
			ir.recs[d] = cpio.Directory(d, 0o755)
		}
	}
	ir.size += int64(r.FileSize)
	ir.recs[r.Name] = r
}

// dir adds a directory owned by uid:gid.
func (ir *initramfs) dir(name string, mode uint64, uid, gid int) {
	r := cpio.Directory(name, mode)
	r.UID, r.GID = uint64(uid), uint64(gid)
	ir.add(r)
}

// host adds the host's file, directory or symlink p (not followed) at
// guest path name, with its mode and owner; the contents are read when
// the archive is written.
func (ir *initramfs) host(p, name string) {
	r, err := cpio.NewRecorder().GetRecord(p)
	r.Name, r.NLink = name, 1 // no hard links: the kernel would link by inode
	if ir.fail(err) {
		ir.add(r)
	}
}

// fail keeps the first error; it reports whether err is nil.
func (ir *initramfs) fail(err error) bool {
	ir.err = cmp.Or(ir.err, err)
	return err == nil
}

// file copies a host file (following symlinks) to guest path name,
// keeping its mode and owner.
func (ir *initramfs) file(host, name string) {
	if real, err := filepath.EvalSymlinks(host); !ir.has(name) && ir.fail(err) {
		ir.host(real, name)
	}
}

// tree copies a directory (the module holding the package directory) to
// the same path: files, directories and symlinks as they are, owners
// kept; .git directories are left out.
func (ir *initramfs) tree(root string) {
	ir.fail(filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && d.Name() == ".git" && p != root:
			return filepath.SkipDir
		case !d.IsDir() && !d.Type().IsRegular() && d.Type()&fs.ModeSymlink == 0:
			return nil
		}
		if ir.host(p, p); ir.size > maxTree {
			return fmt.Errorf("%s holds more than %d MiB; run vmexec from a package directory of a module (go test does)", root, maxTree>>20)
		}
		return ir.err
	}))
}

// executable copies a program to guest path name, with its ELF
// interpreter and libraries when it is dynamically linked.
func (ir *initramfs) executable(host, name string) {
	ir.file(host, name)
	libs, err := sharedLibs(host)
	ir.fail(err)
	for _, l := range libs {
		ir.file(l, l)
	}
}

// sharedLibs lists the loader and libraries of a dynamically linked ELF
// executable, the loader first (none for a static one), as its loader
// resolves them: u-root's pkg/ldd runs the loader with --list, which
// needs no ldd and follows RUNPATH and $ORIGIN as a run would. A library
// the loader cannot find is an error naming it.
func sharedLibs(p string) ([]string, error) {
	f, err := elf.Open(p)
	if err != nil {
		return nil, fmt.Errorf("%s: not an ELF executable: %w", p, err)
	}
	f.Close()
	libs, err := ldd.List(p)
	if err != nil {
		return nil, fmt.Errorf("%s is dynamically linked and its loader could not list its libraries (%s); link it statically", p, strings.TrimSpace(err.Error()))
	}
	for _, l := range libs {
		if !filepath.IsAbs(l) {
			return nil, fmt.Errorf("%s: its loader lists %q, not a library's path", p, l)
		}
	}
	return libs, nil
}

// write writes the archive, sorted so that directories precede what
// they hold, closing each file once it is copied.
func (ir *initramfs) write(w io.Writer) error {
	rw := cpio.Newc.Writer(w)
	for _, n := range slices.Sorted(maps.Keys(ir.recs)) {
		if err := rw.WriteRecord(ir.recs[n]); err != nil && ir.err == nil {
			ir.err = fmt.Errorf("initramfs: %s: %w", n, err)
		}
		if c, ok := ir.recs[n].ReaderAt.(io.Closer); ok {
			c.Close()
		}
	}
	return cmp.Or(ir.err, cpio.WriteTrailer(rw))
}

// findModules resolves module names in a modules tree to their files,
// in the order given: -modules lists dependencies first (vmexec reads no
// modules.dep, which Debian's unpacked packages lack). A name not found
// is an error.
func findModules(dir string, names []string) ([]string, error) {
	byName := map[string]string{}
	err := filepath.WalkDir(filepath.Join(dir, "kernel"), func(p string, d fs.DirEntry, err error) error {
		if n, ok := moduleName(filepath.Base(p)); err == nil && ok && !d.IsDir() {
			byName[n] = p
		}
		return err
	})
	var files []string
	for _, n := range names {
		p, ok := byName[strings.ReplaceAll(n, "-", "_")]
		if err == nil && !ok {
			err = fmt.Errorf("module %s: not in %s", n, dir)
		}
		files = append(files, p)
	}
	return files, err
}

// moduleName is a module file's name with "-" as "_", as the kernel
// knows it.
func moduleName(file string) (string, bool) {
	for _, ext := range []string{".ko", ".ko.xz", ".ko.zst", ".ko.gz"} {
		if n, ok := strings.CutSuffix(file, ext); ok {
			return strings.ReplaceAll(n, "-", "_"), true
		}
	}
	return "", false
}

// treeRoot is what of the host's files the guest gets around the working
// directory: the whole module (the nearest directory above with a go.mod),
// since tests read files of other packages (../../README.md); else the
// working directory alone; "" for the root directory.
func treeRoot(cwd string) string {
	for d := cwd; d != filepath.Dir(d); d = filepath.Dir(d) {
		if exists(filepath.Join(d, "go.mod")) {
			return d
		}
	}
	if cwd == "/" {
		return ""
	}
	return cwd
}

func checkImage(path string) error { return vmflags.Kernel("-kernel", path) }

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// modulesFor finds the modules tree of an image in Debian's layout,
// DIR/boot/vmlinuz-V beside DIR/lib/modules/V, or DIR/usr/lib/modules/V
// as trixie's packages unpack; "" when there is none.
func modulesFor(image string) string {
	bootDir, base := filepath.Split(filepath.Clean(image))
	v, ok := strings.CutPrefix(base, "vmlinuz-")
	if !ok || filepath.Base(filepath.Clean(bootDir)) != "boot" {
		return ""
	}
	for _, lib := range []string{"lib", "usr/lib"} {
		if d := filepath.Join(filepath.Dir(filepath.Clean(bootDir)), lib, "modules", v); exists(d) {
			return d
		}
	}
	return ""
}
