//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeTreeDir is kernelbuild's fake kernel tree: make writes an image
// holding src.c, whose "kbab-fake:" words the fake vmexec takes as
// cmdline words (slow, step=Work); src.c saying BROKEN does not build.
var fakeTreeDir, _ = filepath.Abs("../../kernelbuild/testdata/faketree")

// fakeTree makes a git repository of the fake tree with a commit per
// src.c text and returns it and the commits' hashes.
func fakeTree(t *testing.T, srcs ...string) (string, []string) {
	for _, tool := range []string{"git", "make", "awk"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the fake tree needs %s: %v", tool, err)
		}
	}
	t.Setenv("PATH", filepath.Join(fakeTreeDir, "../fakebin")+":"+os.Getenv("PATH"))
	dir := filepath.Join(t.TempDir(), "linux")
	if err := os.CopyFS(dir, os.DirFS(fakeTreeDir)); err != nil {
		t.Fatal(err)
	}
	git := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	var shas []string
	for i, src := range srcs {
		os.WriteFile(filepath.Join(dir, "src.c"), []byte(src+"\n"), 0o644)
		git("add", "-A")
		git("commit", "-q", "--allow-empty", "-m", "commit "+string(rune('a'+i)))
		shas = append(shas, git("rev-parse", "HEAD"))
	}
	return dir, shas
}

// TestABOfPatch: -tree with -b-patch is an A/B of a commit against it
// plus a patch, each built into the cache, named in the report.
func TestABOfPatch(t *testing.T) {
	tree, shas := fakeTree(t, "kbab-fake: quick")
	patch := filepath.Join(t.TempDir(), "slow.patch")
	os.WriteFile(patch, []byte("--- a/src.c\n+++ b/src.c\n@@ -1 +1 @@\n-kbab-fake: quick\n+kbab-fake: slow\n"), 0o644)
	f := newFake(t)
	cache := t.TempDir()
	self, _ := os.Executable()
	args := []string{"-out", f.out, "-vmexec", self, "-tree", tree, "-build-cache", cache, "-a-kernel", "HEAD", "-b-kernel", "HEAD", "-b-patch", patch, "--", ".", "-run=^$", "-bench=."}
	code, stdout, stderr := f.run(nil, args...)
	if code != 1 || !strings.Contains(stdout, "worse") {
		t.Fatalf("A/B of a patch that slows Work: exit %d, want 1, worse\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, w := range []string{"A (bzImage-" + shas[0][:12] + ")", "B (bzImage-" + shas[0][:12] + "+slow)"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("progress does not name %q:\n%s", w, stderr)
		}
	}
	// Resumed: the same builds, found in the cache, the same settings.
	if code, _, stderr := f.run(nil, args...); code != 1 || strings.Contains(stderr, "kbuild: building") {
		t.Errorf("rerun: exit %d, or it built again:\n%s", code, stderr)
	}
}

// TestBisectCommits: a bisection over a range of the tree builds good,
// bad and only the commits its search visits; a commit that does not
// build is skipped and named: here the commit before the first bad
// one, so either may be the first bad.
func TestBisectCommits(t *testing.T) {
	tree, c := fakeTree(t, "kbab-fake:", "kbab-fake:", "kbab-fake:", "BROKEN", "kbab-fake: step=Work", "kbab-fake: step=Work", "kbab-fake: step=Work")
	f := newFake(t)
	f.knob("planned", 0)
	f.knob("seed", 38)
	cache := t.TempDir()
	self, _ := os.Executable()
	code, stdout, stderr := f.run(nil, "-tree", tree, "-build-cache", cache, "-bisect", c[0][:7]+".."+c[6][:7], "-row", "^Work", "-out", f.out, "-vmexec", self, "--", ".", "-run=^$", "-bench=Work")
	if code != 0 {
		t.Fatalf("bisection: exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, w := range []string{
		"skipped: " + c[3][:12] + " (bzImage-" + c[3][:12] + "): does not build: src.c:1:1: error: broken here\n",
		"first bad: " + c[4][:12] + " (bzImage-" + c[4][:12] + "), or one before it that does not build: " + c[3][:12] + "\n",
	} {
		if !strings.Contains(stdout, w) {
			t.Errorf("report lacks %q:\n%s", w, stdout)
		}
	}
	for i, built := range []bool{true, false, true, false, true, false, true} {
		m, _ := filepath.Glob(filepath.Join(cache, "images", "*", "bzImage-"+c[i][:12]))
		if (len(m) == 1) != built {
			t.Errorf("commit %d built: %v, want %v (good, bad and the search's images alone)", i, len(m) == 1, built)
		}
	}
}

// TestTreeOptions: what -tree's kernels need is checked before any
// build or boot, naming the option.
func TestTreeOptions(t *testing.T) {
	tree, _ := fakeTree(t, "kbab-fake:", "kbab-fake:")
	f := newFake(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-a-kernel", f.imgA, "-b-kernel", f.imgB, "-b-patch", "x.patch"}, "-b-patch goes with -tree"},
		{[]string{"-tree", tree, "-a-kernel", "HEAD", "-b-kernel", "nosuch"}, "-b-kernel: -commit nosuch: not a commit"},
		{[]string{"-tree", tree, "-a-kernel", "HEAD", "-b-kernel", "HEAD", "-config", "nosuch"}, "-a-kernel: -config: want defconfig, running or a config file"},
		{[]string{"-tree", tree, "-series", "HEAD"}, `range "HEAD": want GOOD..BAD`},
		{[]string{"-tree", tree, "-bisect", "HEAD~1..HEAD", "-row", "Work"}, "want a good one, a bad one and at least one image between"},
	} {
		code, _, stderr := f.run(nil, append(append([]string{"-out", f.out}, c.args...), "--", ".")...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %s; want %d naming %q", c.args, code, stderr, exitUsage, c.want)
		}
	}
	if m, _ := filepath.Glob(filepath.Join(f.out, "*")); len(m) > 0 || len(f.calls()) > 0 {
		t.Errorf("bad options left %v and %d boots", m, len(f.calls()))
	}
}
