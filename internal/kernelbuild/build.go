//go:build linux

// Package kernelbuild builds the kernel image a kbench guest boots from
// a kernel source tree at a commit, plus patch files: the base config
// (defconfig, a config file, the running kernel's) merged with
// kvm_guest.config and the suite's options by the kernel's own
// merge_config.sh and olddefconfig, the merged config checked so that
// an option the merge dropped is named, and make bzImage out of tree.
//
// The user's tree is only read: the commit is checked out into a
// private repository in the cache, CACHE/linux/NAME, whose objects are
// the tree's (git alternates), so switching commits rewrites only the
// files that differ and make rebuilds only what depends on them; the
// objects go to CACHE/out/KEY, one directory per base config and
// compiler. Both sit two levels below CACHE, and CCACHE_BASEDIR is CACHE,
// so ccache (used where it is on PATH) sees the same relative paths
// wherever the cache lies. Each image is kept under a key of what made
// it (the commit's tree, the patches, the base config, the options and
// the compiler): a repeated build is a lookup. A build that fails on a
// compiler error is kept too, so that a bisection resumed later skips
// the same commit at once.
package kernelbuild

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/kbench/kbench/internal/vmflags"
)

// Options is the suite's config: what every row and vmexec's guest need
// built in, so that the image needs no module. Merged after the base
// config and kvm_guest.config; Check names each the merge dropped.
var Options = []string{
	"SECCOMP", "SECCOMP_FILTER", // seccompbench, prctlbench
	"BPF_SYSCALL", "BPF_JIT", // filters run JIT-compiled
	"UNIX", "VETH", "NET_NS", // sockfdbench, netbench's namespace rows
	"PERF_EVENTS", "KALLSYMS_ALL", // counters and profiles by symbol
	"DEVTMPFS", "DEVTMPFS_MOUNT", "BLK_DEV_INITRD", // vmexec's initramfs
	"SERIAL_8250", "SERIAL_8250_CONSOLE", // vmexec's ttyS0 console
	"DEBUG_INFO_NONE", // a smaller, quicker build; profiles use kallsyms
}

// Spec is one build's inputs as given.
type Spec struct {
	Tree    string   // a git repository of a kernel source
	Commit  string   // a revision of Tree; "" is HEAD
	Patches []string // applied in order by git apply
	// Config is the base config: "defconfig" (the tree's), "running"
	// (/proc/config.gz, else /boot/config-RELEASE) or a config file.
	Config string
	Cache  string // "" is the user's cache directory's kbench/kbuild
	Jobs   int    // make -j; 0 is the CPUs'
}

// Build is a Spec resolved: the commit, the inputs read and the key.
type Build struct {
	Spec
	SHA, Subject string // the commit
	cc           string // make's CC
	base         []byte // the config file's bytes; nil for defconfig
	Key          string // SHA-256 of everything the image depends on
}

// Resolve checks s and keys the build without building: a bad option
// is named with what it accepts.
func Resolve(s Spec) (*Build, error) {
	if s.Tree == "" {
		return nil, errors.New("-tree: want a git repository of a kernel source, or a source tarball")
	}
	if s.Jobs < 0 {
		return nil, fmt.Errorf("-j %d: want a number of make jobs >= 1, or 0 for one a CPU", s.Jobs)
	}
	if s.Commit == "" {
		s.Commit = "HEAD"
	}
	var err error
	if s.Tree, err = filepath.Abs(s.Tree); err != nil {
		return nil, err
	}
	if s.Cache == "" {
		d, err := os.UserCacheDir()
		if err != nil {
			return nil, fmt.Errorf("-cache: %v", err)
		}
		s.Cache = filepath.Join(d, "kbench", "kbuild")
	}
	if s.Cache, err = filepath.Abs(s.Cache); err != nil {
		return nil, err
	}
	if strings.Contains(filepath.Base(s.Tree), ".tar") {
		if s.Tree, err = importTarball(s.Tree, s.Cache); err != nil {
			return nil, err
		}
	}
	if _, err := os.Stat(filepath.Join(s.Tree, "Makefile")); err != nil {
		return nil, fmt.Errorf("-tree %s: no kernel Makefile: want a kernel source tree (a git repository) or its tarball", s.Tree)
	}
	s.Patches = slices.Clone(s.Patches)
	b := &Build{Spec: s, cc: "gcc"}
	out, err := git(s.Tree, "log", "-1", "--format=%H %T %s", s.Commit+"^{commit}", "--")
	if err != nil {
		return nil, fmt.Errorf("-commit %s: not a commit of %s: %v", s.Commit, s.Tree, err)
	}
	f := strings.SplitN(out, " ", 3)
	if len(f) < 2 {
		return nil, fmt.Errorf("-commit %s: git log printed %q", s.Commit, out)
	}
	b.SHA, b.Subject = f[0], strings.Join(f[2:], "")
	h := sha256.New()
	fmt.Fprintf(h, "tree %s\n", f[1])
	for i, p := range s.Patches {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("-patch: %v", err)
		}
		if b.Patches[i], err = filepath.Abs(p); err != nil {
			return nil, err
		}
		fmt.Fprintf(h, "patch %x\n", sha256.Sum256(data))
	}
	if b.base, err = readBase(s.Config); err != nil {
		return nil, err
	}
	if _, err := exec.LookPath("ccache"); err == nil {
		b.cc = "ccache gcc"
	}
	cv, err := exec.Command("gcc", "--version").Output()
	if err != nil {
		return nil, fmt.Errorf("gcc --version: %v: the build needs gcc", err)
	}
	first, _, _ := strings.Cut(string(cv), "\n")
	fmt.Fprintf(h, "base %s %x\noptions %s\ncompiler %s\n", s.Config, sha256.Sum256(b.base), strings.Join(Options, " "), first)
	b.Key = hex.EncodeToString(h.Sum(nil))
	return b, nil
}

// readBase reads a base config: nil for defconfig (the tree's own).
func readBase(c string) ([]byte, error) {
	switch c {
	case "defconfig":
		return nil, nil
	case "running":
		if f, err := os.Open("/proc/config.gz"); err == nil {
			defer f.Close()
			z, err := gzip.NewReader(f)
			if err != nil {
				return nil, fmt.Errorf("-config running: /proc/config.gz: %v", err)
			}
			return io.ReadAll(z)
		}
		rel, _ := os.ReadFile("/proc/sys/kernel/osrelease")
		b, err := os.ReadFile("/boot/config-" + strings.TrimSpace(string(rel)))
		if err != nil {
			return nil, fmt.Errorf("-config running: no /proc/config.gz and %v", err)
		}
		return b, nil
	case "":
		return nil, errors.New("-config: want defconfig, running (this kernel's) or a config file")
	}
	b, err := os.ReadFile(c)
	if err != nil {
		return nil, fmt.Errorf("-config: want defconfig, running or a config file: %v", err)
	}
	if _, err := ParseConfig(b); err != nil {
		return nil, fmt.Errorf("-config %s: %v", c, err)
	}
	return b, nil
}

// Short names the commit for a message: its hash's first 12 digits
// and, with patches, their names.
func (b *Build) Short() string {
	s := b.SHA[:12]
	for _, p := range b.Patches {
		s += "+" + strings.TrimSuffix(filepath.Base(p), ".patch")
	}
	return s
}

// Image is where the image is (once built): CACHE/images/KEY/bzImage-SHORT.
func (b *Build) Image() string {
	return filepath.Join(b.Cache, "images", b.Key, "bzImage-"+b.Short())
}

// Failed is a build that failed on the tree's account: a patch that
// does not apply or a compiler error. It is kept in the cache.
type Failed struct {
	Commit, Why, Log string
}

func (f *Failed) Error() string {
	return fmt.Sprintf("commit %s does not build: %s (log: %s)", f.Commit, f.Why, f.Log)
}

// Make builds the image where it is not built yet and returns its path;
// progress goes to w. One build at a time holds the cache.
func (b *Build) Make(w io.Writer) (string, error) {
	img, dir := b.Image(), filepath.Dir(b.Image())
	if _, err := os.Stat(img); err == nil {
		return img, nil
	}
	if why, err := os.ReadFile(filepath.Join(dir, "failed")); err == nil {
		return "", &Failed{b.Short() + " (" + b.Subject + ")", string(why), filepath.Join(dir, "build.log")}
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return "", err
	}
	lock, err := os.OpenFile(filepath.Join(b.Cache, "lock"), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", err
	}
	if _, err := os.Stat(img); err == nil {
		return img, nil // built by another while this one waited
	}
	start := time.Now()
	fmt.Fprintf(w, "kbuild: building %s (%s)\n", b.Short(), b.Subject)
	logPath := filepath.Join(dir, "build.log")
	log, err := os.Create(logPath)
	if err != nil {
		return "", err
	}
	defer log.Close()
	fail := func(why string) (string, error) {
		os.WriteFile(filepath.Join(dir, "failed"), []byte(why), 0o666)
		return "", &Failed{b.Short() + " (" + b.Subject + ")", why, logPath}
	}
	src := filepath.Join(b.Cache, "linux", filepath.Base(b.Tree))
	if err := b.checkout(src); err != nil {
		var pe patchError
		if errors.As(err, &pe) {
			return fail(pe.Error())
		}
		return "", err
	}
	obj := filepath.Join(b.Cache, "out", objKey(b))
	if err := b.configure(src, obj, dir, log); err != nil {
		return "", err
	}
	if err := b.make(src, obj, log, w, start, "bzImage"); err != nil {
		if first := firstError(logPath); first != "" {
			return fail(first)
		}
		return "", fmt.Errorf("commit %s: make bzImage: %v (log: %s)", b.Short(), err, logPath)
	}
	built := filepath.Join(obj, "arch/x86/boot/bzImage")
	if err := vmflags.Kernel("make bzImage", built); err != nil {
		return "", err
	}
	data, err := os.ReadFile(built)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(img+".tmp", data, 0o666); err != nil {
		return "", err
	}
	if err := os.Rename(img+".tmp", img); err != nil {
		return "", err
	}
	fmt.Fprintf(w, "kbuild: %s built in %s: %s\n", b.Short(), time.Since(start).Round(time.Second), img)
	return img, nil
}

// objKey names the object directory: one per base config and compiler,
// kept across commits so that make rebuilds only what changed.
func objKey(b *Build) string {
	h := sha256.Sum256([]byte(b.Config + "\x00" + string(b.base) + "\x00" + b.cc))
	return hex.EncodeToString(h[:8])
}

type patchError struct{ error }

// checkout makes src the commit plus the patches: a private repository
// that borrows the tree's objects, so the tree is only read.
func (b *Build) checkout(src string) error {
	if _, err := os.Stat(filepath.Join(src, ".git")); err != nil {
		if _, err := git("", "init", "-q", src); err != nil {
			return err
		}
		if _, err := git(src, "config", "gc.auto", "0"); err != nil {
			return err
		}
	}
	objs, err := git(b.Tree, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(src, ".git/objects/info/alternates"), []byte(filepath.Join(objs, "objects")+"\n"), 0o666); err != nil {
		return err
	}
	if _, err := git(src, "checkout", "-q", "--force", "--detach", b.SHA); err != nil {
		return err
	}
	if _, err := git(src, "clean", "-q", "-f", "-d", "-x"); err != nil {
		return err
	}
	for _, p := range b.Patches {
		if _, err := git(src, "apply", p); err != nil {
			return patchError{fmt.Errorf("patch %s does not apply: %v", p, err)}
		}
	}
	return nil
}

// configure writes obj/.config: the base, then kvm_guest.config and
// Options merged by merge_config.sh, then olddefconfig; and checks that
// every option survived. A copy goes beside the image.
func (b *Build) configure(src, obj, dir string, log io.Writer) error {
	if err := os.MkdirAll(obj, 0o777); err != nil {
		return err
	}
	cfg := filepath.Join(obj, ".config")
	if b.base == nil {
		if err := b.make(src, obj, log, nil, time.Now(), "defconfig"); err != nil {
			return fmt.Errorf("make defconfig: %v", err)
		}
	} else if err := os.WriteFile(cfg, b.base, 0o666); err != nil {
		return err
	}
	var frag strings.Builder
	for _, o := range Options {
		fmt.Fprintf(&frag, "CONFIG_%s=y\n", o)
	}
	fragPath := filepath.Join(obj, "kbench.config")
	if err := os.WriteFile(fragPath, []byte(frag.String()), 0o666); err != nil {
		return err
	}
	merge := exec.Command("sh", filepath.Join(src, "scripts/kconfig/merge_config.sh"), "-m", "-O", obj, cfg,
		filepath.Join(src, "kernel/configs/kvm_guest.config"), fragPath)
	merge.Dir, merge.Stdout, merge.Stderr = src, log, log
	if err := merge.Run(); err != nil {
		return fmt.Errorf("merge_config.sh: %v", err)
	}
	if err := b.make(src, obj, log, nil, time.Now(), "olddefconfig"); err != nil {
		return fmt.Errorf("make olddefconfig: %v", err)
	}
	data, err := os.ReadFile(cfg)
	if err != nil {
		return err
	}
	if err := Check(data); err != nil {
		return fmt.Errorf("commit %s, -config %s: %v", b.Short(), b.Config, err)
	}
	return os.WriteFile(filepath.Join(dir, "config"), data, 0o666)
}

// make runs make target out of tree, its output to log; with w, a
// progress line every 15 s: the steps done and the last.
func (b *Build) make(src, obj string, log, w io.Writer, start time.Time, target string) error {
	jobs := b.Jobs
	if jobs == 0 {
		jobs = runtime.NumCPU()
	}
	cmd := exec.Command("make", "-C", src, "O="+obj, "CC="+b.cc, fmt.Sprintf("-j%d", jobs), target)
	cmd.Env = append(os.Environ(), "CCACHE_BASEDIR="+b.Cache)
	if w == nil {
		cmd.Stdout, cmd.Stderr = log, log
		return cmd.Run()
	}
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { err := cmd.Wait(); pw.Close(); done <- err }()
	sc := bufio.NewScanner(pr)
	steps, last, shown := 0, "", time.Now()
	for sc.Scan() {
		line := sc.Text()
		fmt.Fprintln(log, line)
		if strings.HasPrefix(line, "  ") && len(strings.Fields(line)) == 2 {
			steps, last = steps+1, strings.Join(strings.Fields(line), " ")
		}
		if time.Since(shown) >= 15*time.Second {
			shown = time.Now()
			fmt.Fprintf(w, "kbuild: %s: %d steps, %s, at %s\n", b.Short(), steps, time.Since(start).Round(time.Second), last)
		}
	}
	return <-done
}

// errorLine is a compiler's or linker's error line.
var errorLine = regexp.MustCompile(`: (fatal )?error: |undefined reference to `)

// firstError is the first error line of a build log, "" where none is.
func firstError(p string) string {
	data, err := os.ReadFile(p)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		if errorLine.MatchString(line) {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

// git runs git in dir ("" the working directory) and returns its
// output, trimmed; an error carries git's stderr.
func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// Range is the commits of tree's range GOOD..BAD on BAD's first-parent
// line, GOOD first and BAD last, as full hashes.
func Range(tree, r string) ([]string, error) {
	good, bad, ok := strings.Cut(r, "..")
	if !ok || good == "" || bad == "" || strings.HasPrefix(bad, ".") {
		return nil, fmt.Errorf("range %q: want GOOD..BAD, two revisions of the tree", r)
	}
	g, err := git(tree, "rev-parse", "--verify", "-q", good+"^{commit}")
	if err != nil {
		return nil, fmt.Errorf("range %s: %s is not a commit of %s", r, good, tree)
	}
	out, err := git(tree, "rev-list", "--reverse", "--first-parent", good+".."+bad, "--")
	if err != nil {
		return nil, fmt.Errorf("range %s: %v", r, err)
	}
	shas := append([]string{g}, strings.Fields(out)...)
	if len(shas) < 2 {
		return nil, fmt.Errorf("range %s: no commit after %s", r, good)
	}
	if p, err := git(tree, "rev-parse", shas[1]+"^1"); err != nil || p != g {
		return nil, fmt.Errorf("range %s: %s is not on %s's first-parent line", r, good, bad)
	}
	return shas, nil
}
