//go:build linux

package kernelbuild

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The fake tree (testdata/faketree) is a kernel tree to kernelbuild: a
// Makefile that does what a kernel's does for it (defconfig,
// olddefconfig, bzImage with O=), writing an image with a bzImage
// header, src.c and the config; it counts its bzImage builds in
// O/builds, fails where src.c says BROKEN with a compiler's error line,
// and drops the option the file drop names; and a merge_config.sh whose
// later files' values win. Each test makes a git repository of it.
type fakeTree struct {
	t          *testing.T
	dir, cache string
}

func newFakeTree(t *testing.T) *fakeTree {
	for _, tool := range []string{"git", "make", "awk"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the fake tree needs %s: %v", tool, err)
		}
	}
	bin, _ := filepath.Abs("testdata/fakebin") // its gcc says a version
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	ft := &fakeTree{t: t, dir: filepath.Join(t.TempDir(), "linux"), cache: t.TempDir()}
	ft.git("init", "-q", ft.dir)
	if err := os.CopyFS(ft.dir, os.DirFS("testdata/faketree")); err != nil {
		t.Fatal(err)
	}
	ft.commit("base", map[string]string{"src.c": "one\n"})
	return ft
}

func (ft *fakeTree) git(args ...string) string {
	ft.t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
	cmd.Dir = ft.dir
	if args[0] == "init" {
		cmd.Dir = ""
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		ft.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// commit writes files and commits them; it returns the commit's hash.
func (ft *fakeTree) commit(msg string, files map[string]string) string {
	for name, text := range files {
		p := filepath.Join(ft.dir, name)
		os.MkdirAll(filepath.Dir(p), 0o777)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			ft.t.Fatal(err)
		}
	}
	ft.git("add", "-A")
	ft.git("commit", "-q", "-m", msg)
	return ft.git("rev-parse", "HEAD")
}

func (ft *fakeTree) spec(commit string, patches ...string) Spec {
	return Spec{Tree: ft.dir, Commit: commit, Patches: patches, Config: "defconfig", Cache: ft.cache, Jobs: 1}
}

// build resolves and makes s, failing the test on an error.
func (ft *fakeTree) build(s Spec) (string, *Build) {
	ft.t.Helper()
	b, err := Resolve(s)
	if err != nil {
		ft.t.Fatal(err)
	}
	var log strings.Builder
	img, err := b.Make(&log)
	if err != nil {
		ft.t.Fatalf("%v\n%s", err, log.String())
	}
	return img, b
}

// builds is how many times the fake make built a bzImage.
func (ft *fakeTree) builds() int {
	ft.t.Helper()
	n := 0
	m, _ := filepath.Glob(filepath.Join(ft.cache, "out", "*", "builds"))
	for _, p := range m {
		b, _ := os.ReadFile(p)
		n += strings.Count(string(b), "built")
	}
	return n
}

func TestBuildCachesByTreeState(t *testing.T) {
	ft := newFakeTree(t)
	first := ft.git("rev-parse", "HEAD")
	second := ft.commit("two", map[string]string{"src.c": "two\n"})
	img1, b1 := ft.build(ft.spec(first))
	data, _ := os.ReadFile(img1)
	if !strings.Contains(string(data), "one\n") || !strings.Contains(string(data), "CONFIG_SECCOMP_FILTER=y") || !strings.Contains(string(data), "CONFIG_KVM_GUEST=y") {
		t.Errorf("image of %s holds %q: want its source and the merged config", first, data[520:])
	}
	if !strings.HasSuffix(img1, "bzImage-"+first[:12]) || b1.Subject != "base" {
		t.Errorf("image %s, subject %q: want bzImage-%s, base", img1, b1.Subject, first[:12])
	}
	again, _ := ft.build(ft.spec(first[:7]))
	if again != img1 || ft.builds() != 1 {
		t.Errorf("repeated build: %s after %d makes, want %s after 1 (the cached image)", again, ft.builds(), img1)
	}
	img2, _ := ft.build(ft.spec(second))
	data2, _ := os.ReadFile(img2)
	if img2 == img1 || !strings.Contains(string(data2), "two\n") || ft.builds() != 2 {
		t.Errorf("second commit: %s (%d makes), holding %q: want a new image of its source", img2, ft.builds(), data2[520:])
	}
	if st := ft.git("status", "--porcelain", "--ignored"); st != "" {
		t.Errorf("the tree was written: git status %q", st)
	}
}

func TestBuildWithPatch(t *testing.T) {
	ft := newFakeTree(t)
	patch := filepath.Join(t.TempDir(), "fix.patch")
	os.WriteFile(filepath.Join(ft.dir, "src.c"), []byte("patched\n"), 0o644)
	os.WriteFile(patch, []byte(ft.git("diff")+"\n"), 0o644)
	ft.git("checkout", "src.c")
	base, _ := ft.build(ft.spec("HEAD"))
	img, b := ft.build(ft.spec("HEAD", patch))
	data, _ := os.ReadFile(img)
	if img == base || !strings.Contains(string(data), "patched\n") || !strings.HasSuffix(b.Short(), "+fix") {
		t.Errorf("patched build %s (%s) holds %q: want a new image of the patched source", img, b.Short(), data[520:])
	}
	// Back to the base: the checkout must drop the patch.
	os.Remove(base)
	again, _ := ft.build(ft.spec("HEAD"))
	if data, _ := os.ReadFile(again); strings.Contains(string(data), "patched") {
		t.Errorf("base rebuilt after the patched build holds the patch: %q", data[520:])
	}
}

func TestFailedBuildNamesCommitAndError(t *testing.T) {
	ft := newFakeTree(t)
	bad := ft.commit("break it", map[string]string{"src.c": "BROKEN\n"})
	for try := range 2 {
		b, err := Resolve(ft.spec(bad))
		if err != nil {
			t.Fatal(err)
		}
		_, err = b.Make(&strings.Builder{})
		var f *Failed
		if !errors.As(err, &f) || !strings.Contains(err.Error(), bad[:12]+" (break it)") || f.Why != "src.c:1:1: error: broken here" {
			t.Errorf("try %d: %v: want a Failed naming %s and the compiler's error", try, err, bad[:12])
		}
	}
	if ft.builds() != 0 {
		t.Errorf("%d images made of a commit that does not build", ft.builds())
	}
}

// A build that fails with no compiler error (the machine's, not the
// tree's) is not kept: the next try builds again.
func TestMachineFailureIsNotKept(t *testing.T) {
	ft := newFakeTree(t)
	ft.commit("full disk", map[string]string{"enospc": ""})
	for try := range 2 {
		b, _ := Resolve(ft.spec("HEAD"))
		_, err := b.Make(&strings.Builder{})
		var f *Failed
		if err == nil || errors.As(err, &f) || !strings.Contains(err.Error(), "make bzImage: exit status") {
			t.Errorf("try %d: %v, want make's failure, not a commit that does not build", try, err)
		}
	}
}

func TestDroppedOptionIsNamed(t *testing.T) {
	ft := newFakeTree(t)
	ft.commit("no veth", map[string]string{"drop": "VETH"})
	b, err := Resolve(ft.spec("HEAD"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Make(&strings.Builder{})
	if err == nil || !strings.Contains(err.Error(), "dropped CONFIG_VETH (absent)") {
		t.Errorf("got %v, want the dropped CONFIG_VETH named", err)
	}
}

func TestBadOptionsStopBeforeBuilding(t *testing.T) {
	ft := newFakeTree(t)
	notConfig := filepath.Join(t.TempDir(), "notes")
	os.WriteFile(notConfig, []byte("hello\n"), 0o644)
	for _, c := range []struct {
		s    Spec
		want string
	}{
		{Spec{Config: "defconfig"}, "-tree: want a git repository"},
		{Spec{Tree: t.TempDir(), Config: "defconfig"}, "no kernel Makefile"},
		{Spec{Tree: ft.dir, Commit: "nosuch", Config: "defconfig"}, "-commit nosuch: not a commit"},
		{Spec{Tree: ft.dir, Patches: []string{"/nonexistent.patch"}, Config: "defconfig"}, "-patch: open /nonexistent.patch"},
		{Spec{Tree: ft.dir}, "-config: want defconfig, running"},
		{Spec{Tree: ft.dir, Config: "/nonexistent"}, "-config: want defconfig, running or a config file"},
		{Spec{Tree: ft.dir, Config: notConfig}, `line 1: "hello": want CONFIG_NAME=VALUE`},
		{Spec{Tree: ft.dir, Config: "defconfig", Jobs: -1}, "-j -1: want"},
	} {
		c.s.Cache = ft.cache
		if _, err := Resolve(c.s); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want %q", c.s, err, c.want)
		}
	}
	if m, _ := filepath.Glob(filepath.Join(ft.cache, "*")); len(m) != 0 {
		t.Errorf("bad options wrote %v", m)
	}
}

func TestCheck(t *testing.T) {
	var all strings.Builder
	for _, o := range Options {
		all.WriteString("CONFIG_" + o + "=y\n")
	}
	if err := Check([]byte(all.String())); err != nil {
		t.Errorf("every option =y: %v", err)
	}
	cut := strings.Replace(all.String(), "CONFIG_BPF_JIT=y", "# CONFIG_BPF_JIT is not set", 1)
	cut = strings.Replace(cut, "CONFIG_VETH=y", "CONFIG_VETH=m", 1)
	if err := Check([]byte(cut)); err == nil || !strings.Contains(err.Error(), "CONFIG_BPF_JIT (n), CONFIG_VETH (m)") {
		t.Errorf("got %v, want BPF_JIT and VETH named", err)
	}
}

// A source tarball (as Debian's linux-source-6.1 installs one) builds as
// a commit: imported once, found again by its contents.
func TestBuildFromTarball(t *testing.T) {
	ft := newFakeTree(t)
	tarball := filepath.Join(t.TempDir(), "linux-source-9.9.tar.gz")
	if out, err := exec.Command("tar", "-czf", tarball, "--exclude=.git", "-C", filepath.Dir(ft.dir), "linux").CombinedOutput(); err != nil {
		t.Fatalf("tar: %v: %s", err, out)
	}
	s := ft.spec("")
	s.Tree = tarball
	img, b := ft.build(s)
	if !strings.HasPrefix(b.Tree, filepath.Join(ft.cache, "src")) || filepath.Base(b.Tree) != "linux-source-9.9" {
		t.Errorf("tree imported at %s, want CACHE/src/SUM/linux-source-9.9", b.Tree)
	}
	if b.Key != ft.key("HEAD") {
		t.Errorf("the tarball's key %s differs from its tree's at HEAD %s", b.Key, ft.key("HEAD"))
	}
	img2, b2 := ft.build(s)
	if img2 != img || b2.Tree != b.Tree || ft.builds() != 1 {
		t.Errorf("second build of the tarball: %s in %s after %d builds, want the first's image, tree and 1 build", img2, b2.Tree, ft.builds())
	}
	s.Tree = filepath.Join(t.TempDir(), "empty.tar")
	exec.Command("tar", "-cf", s.Tree, "-T", "/dev/null").Run()
	if _, err := Resolve(s); err == nil || !strings.Contains(err.Error(), "no kernel Makefile") {
		t.Errorf("an empty tarball: %v, want no kernel Makefile", err)
	}
	// Not a kernel, and cut short: refused with what is wrong, leaving no
	// repository behind for a later run to find.
	other := filepath.Join(t.TempDir(), "notes.tar")
	os.WriteFile(filepath.Join(filepath.Dir(other), "README"), []byte("not a kernel\n"), 0o666)
	exec.Command("tar", "-cf", other, "-C", filepath.Dir(other), "README").Run()
	good, _ := os.ReadFile(tarball)
	cut := filepath.Join(t.TempDir(), "linux-source-9.8.tar.gz")
	os.WriteFile(cut, good[:len(good)/2], 0o666)
	for _, c := range []struct{ tree, want string }{{other, "no kernel Makefile"}, {cut, "tar:"}} {
		s.Tree = c.tree
		if _, err := Resolve(s); err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.tree) {
			t.Errorf("tarball %s: %v, want an error naming it and %q", c.tree, err, c.want)
		}
	}
	left, _ := filepath.Glob(filepath.Join(ft.cache, "src", "*", "*"))
	if len(left) != 1 || left[0] != b.Tree {
		t.Errorf("after the refused tarballs the cache holds %v, want only %s", left, b.Tree)
	}
}

// key is the build key of the fake tree at commit.
func (ft *fakeTree) key(commit string) string {
	ft.t.Helper()
	b, err := Resolve(ft.spec(commit))
	if err != nil {
		ft.t.Fatal(err)
	}
	return b.Key
}
