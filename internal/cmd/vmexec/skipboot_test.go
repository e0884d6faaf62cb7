//go:build linux

package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// listPkg is a module of one package with a test, a subtest, a
// benchmark and an example, built once as a test binary.
var listPkg = struct {
	once      sync.Once
	dir, bin  string
	err       error
	buildFail []byte
}{}

const listPkgSource = `package listpkg

import (
	"fmt"
	"os"
	"testing"
)

// TestMain stands for benchmain: a pulse it must not run on the host, a
// failure, a line of its own before the list.
func TestMain(m *testing.M) {
	switch {
	case os.Getenv("KBENCH_PULSE") != "":
		os.Exit(3)
	case os.Getenv("LISTPKG_FAIL") != "":
		os.Exit(1)
	case os.Getenv("LISTPKG_SAY") != "":
		fmt.Println("# kbench a fingerprint line")
	}
	os.Exit(m.Run())
}

func TestA(t *testing.T) { t.Run("sub", func(t *testing.T) {}) }

func BenchmarkB(b *testing.B) {
	for range b.N {
	}
}

func Example() {
	fmt.Println("c")
	// Output: c
}
`

func needListPkg(t *testing.T) (dir, bin string) {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool to build a test binary with")
	}
	listPkg.once.Do(func() {
		dir, err := os.MkdirTemp("", "vmexec-listpkg-")
		if err != nil {
			listPkg.err = err
			return
		}
		listPkg.dir, listPkg.bin = dir, filepath.Join(dir, "listpkg.test")
		os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module listpkg\n\ngo 1.26\n"), 0o644)
		os.WriteFile(filepath.Join(dir, "list_test.go"), []byte(listPkgSource), 0o644)
		cmd := exec.Command(goTool, "test", "-c", "-o", listPkg.bin, ".")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off")
		listPkg.buildFail, listPkg.err = cmd.CombinedOutput()
	})
	if listPkg.err != nil {
		t.Fatalf("building the list package: %v\n%s", listPkg.err, listPkg.buildFail)
	}
	return listPkg.dir, listPkg.bin
}

// noCoverDir unsets GOCOVERDIR, which go test -cover sets for the test
// and under which vmexec always boots (a covered binary writes there).
func noCoverDir(t *testing.T) { t.Setenv("GOCOVERDIR", "") }

// TestNothingToRun: vmexec boots for whatever the binary would run, and
// for a binary with nothing to run prints what that binary prints when
// run itself, byte for byte, on each stream.
func TestNothingToRun(t *testing.T) {
	_, bin := needListPkg(t)
	noCoverDir(t)
	for _, tc := range []struct {
		args    string
		nothing bool
	}{
		{"-test.run=^$", true},
		{"-test.run=^$ -test.v=true", true},
		{"-test.run=^$ -test.v=test2json", true},
		{"-test.run=^$ -test.bench=NoSuch", true},
		{"-test.run=^$ -test.bench=NoSuch -test.v=test2json", true},
		{"-test.paniconexit0 -test.timeout=10m0s -test.run=NoSuch -test.count=1", true},
		{"-test.run=NoSuch/TestA", true},
		{"", false},
		{"-test.run=^$ -test.bench=.", false},
		{"-test.run=^$ -test.bench=B/x=1", false},
		{"-test.run=TestA/nosuch", false}, // TestA itself runs
		{"-test.run=Example", false},
		{"-test.run=(A|Z)/sub", false},
		{"-test.run=^$ -test.cpuprofile=cpu.out", false}, // it writes a profile
		{"-test.run=^$ -test.list=.", false},
		{"-test.run=^$ -test.shuffle=on", false},
		{"-test.run ^$", false}, // not go test's form
		{"-test.run=^$ -custom=1", false},
	} {
		args := append([]string{bin}, strings.Fields(tc.args)...)
		stdout, stderr, nothing := nothingToRun(args)
		if nothing != tc.nothing {
			t.Errorf("%s: nothing to run = %v, want %v", tc.args, nothing, tc.nothing)
			continue
		}
		if !nothing {
			continue
		}
		cmd := exec.Command(bin, args[1:]...)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			t.Errorf("%s: the binary itself: %v", tc.args, err)
		}
		if stdout != out.String() || stderr != errOut.String() {
			t.Errorf("%s: printed stdout %q stderr %q; the binary prints %q and %q", tc.args, stdout, stderr, out.String(), errOut.String())
		}
	}
	if _, _, nothing := nothingToRun([]string{"true", "-test.run=^$"}); nothing {
		t.Error("a program that is no Go test binary was taken for one with nothing to run")
	}
}

// TestNothingToRunListRun: the list run on the host gets no
// KBENCH_PULSE, passes over a TestMain's own lines, and one that fails
// means booting.
func TestNothingToRunListRun(t *testing.T) {
	_, bin := needListPkg(t)
	t.Setenv("KBENCH_PULSE", "protect")
	t.Setenv("LISTPKG_SAY", "1")
	if !mayRun(bin, ".", "Test") {
		t.Errorf("list run with KBENCH_PULSE set and a TestMain line: nothing to run")
	}
	if mayRun(bin, "^$", "Test", "Example", "Fuzz") {
		t.Errorf("list run of ^$: something to run; the TestMain's line is no test")
	}
	t.Setenv("LISTPKG_FAIL", "1")
	if !mayRun(bin, "^$", "Test") {
		t.Error("a list run that exited 1 was taken as an answer")
	}
	if _, _, nothing := nothingToRun([]string{bin, "-test.run=^$"}); nothing {
		t.Error("nothing to run, though the list run failed")
	}
}

func TestTopLevel(t *testing.T) {
	for in, want := range map[string]string{
		"":        "",
		"^TestA$": "^TestA$",
		"^BenchmarkLoad$/^shape=stress-ng$/^loaders=1$": "^BenchmarkLoad$",
		"(A|B/C)/x": "(A|B/C)",
		"[/]x/y":    "[/]x",
		`a\/b`:      `a\/b`, // an escaped slash does not split
		`a\\/b`:     `a\\`,
		"Test A/b":  "Test_A",
		"/sub":      "",
	} {
		if got := topLevel(in); got != want {
			t.Errorf("topLevel(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestGoTestNoBoot: under go test -exec, a package with nothing to run
// costs no boot (QEMU is missing here, so a boot would fail) and go test
// prints its usual line; with a benchmark to run vmexec tries to boot.
func TestGoTestNoBoot(t *testing.T) {
	needVMExec(t)
	dir, _ := needListPkg(t)
	noCoverDir(t)
	img := fakeImage(t, t.TempDir(), 4096)
	exe := vmexecBin + " -kernel " + img + " -qemu no-such-qemu"
	goTest := func(args ...string) (string, error) {
		cmd := exec.Command("go", append([]string{"test", "-count=1", "-exec", exe}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := goTest("-run=^$", ".")
	if err != nil || !strings.Contains(out, "ok  \tlistpkg\t") || !strings.Contains(out, "[no tests to run]") {
		t.Errorf("go test -run='^$' under vmexec: %v\n%s", err, out)
	}
	out, err = goTest("-run=^$", "-bench=NoSuch", "-json", ".")
	if err != nil || !strings.Contains(out, `"Action":"pass","Package":"listpkg"`) {
		t.Errorf("go test -json -run='^$' -bench=NoSuch with no such QEMU ran a boot or failed: %v\n%s", err, out)
	}
	out, err = goTest("-run=^$", "-bench=B", ".")
	var exit *exec.ExitError
	if !errors.As(err, &exit) || !strings.Contains(out, "no-such-qemu not found in PATH") {
		t.Errorf("go test -bench=B under vmexec with no such QEMU: %v, want a failed boot\n%s", err, out)
	}
}

// FuzzTopLevel: any pattern's top level is a prefix of it (spaces made
// underscores) that ends before a slash or at its end.
func FuzzTopLevel(f *testing.F) {
	for _, s := range []string{"^BenchmarkLoad$/^shape=x$", "(A|B/C)/x", `a\/b`, "[/]x/y", "Test A/b", "/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, pattern string) {
		top := topLevel(pattern)
		rest, ok := strings.CutPrefix(strings.ReplaceAll(pattern, " ", "_"), top)
		if !ok || rest != "" && rest[0] != '/' {
			t.Fatalf("topLevel(%q) = %q: not a prefix ending at a slash", pattern, top)
		}
	})
}
