//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/abfile"
)

var (
	pkgDir     string // this package's directory, in the kbench module
	fakeModule string // a module with one trivial test package
	fakeGoDir  string // a directory whose go is the fake go test (fakeGoTest)
)

func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == "go" {
		os.Exit(fakeGoTest())
	}
	if os.Getenv(fakeEnv) != "" {
		os.Exit(fakeVMExec())
	}
	os.Exit(setupAndRun(m))
}

func setupAndRun(m *testing.M) int {
	pkgDir, _ = os.Getwd()
	os.Setenv(fixtureEnv, filepath.Join(pkgDir, "..", "..", "profdelta", "testdata", "work"))
	tmp, err := os.MkdirTemp("", "kbab-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	fakeModule = filepath.Join(tmp, "fake")
	os.MkdirAll(fakeModule, 0o777)
	os.WriteFile(filepath.Join(fakeModule, "go.mod"), []byte("module fake\n\ngo 1.22\n"), 0o666)
	os.WriteFile(filepath.Join(fakeModule, "fake_test.go"), []byte("package fake\n\nimport \"testing\"\n\nfunc BenchmarkWork(b *testing.B) {}\n"), 0o666)
	// fakeGoDir's go is this binary: newFake puts it first in PATH.
	fakeGoDir = filepath.Join(tmp, "bin")
	self, _ := os.Executable()
	os.MkdirAll(fakeGoDir, 0o777)
	if err := os.Symlink(self, filepath.Join(fakeGoDir, "go")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if _, err := exec.LookPath("go"); err != nil {
		// kbab drives go test: without the toolchain (a copied test
		// binary, go test -exec vmexec) every test that runs it skips.
		noGo = fmt.Sprintf("kbab runs go test, and this test needs the Go toolchain, which is not here (%v): install Go or run the test with go test where it is", err)
		return m.Run()
	}
	return m.Run()
}

// fake is one test's fake vmexec: its knob directory and kernel images.
type fake struct {
	t          testing.TB
	dir, out   string
	imgA, imgB string
}

// noGo says why the tests that run go test skip, when they do.
var noGo string

func newFake(t testing.TB) *fake {
	return newFakeGo(t, false)
}

// newFakeGo is newFake, running the real go test where realGo (which
// builds the fake module's test binary and runs it through -exec, a
// second or more a boot), else the fake go test (fakeGoTest: the
// stand-in vmexec at once).
func newFakeGo(t testing.TB, realGo bool) *fake {
	if realGo && noGo != "" {
		t.Skip(noGo)
	}
	if !realGo {
		t.Setenv("PATH", fakeGoDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	}
	f := &fake{t: t, dir: t.TempDir(), out: filepath.Join(t.TempDir(), "out")}
	f.imgA = filepath.Join(f.dir, "bzImage-a")
	f.imgB = filepath.Join(f.dir, "bzImage-b")
	writeImage(t, f.imgA, "kernel a")
	writeImage(t, f.imgB, "kernel b")
	t.Setenv(fakeEnv, f.dir)
	t.Chdir(fakeModule)
	return f
}

// writeImage writes a file that passes vmexec's kernel image check (a
// bzImage header), tagged so that two images differ.
func writeImage(t testing.TB, p, tag string) {
	b := make([]byte, 0x208)
	copy(b[0x202:], "HdrS\x0f\x02")
	if err := os.WriteFile(p, append(b, tag...), 0o666); err != nil {
		t.Fatal(err)
	}
}

// knob sets a knob of the fake: the call (an int) or calls (a string of
// numbers) it acts on.
func (f *fake) knob(name string, calls any) {
	if err := os.WriteFile(filepath.Join(f.dir, name), []byte(fmt.Sprint(calls)), 0o666); err != nil {
		f.t.Fatal(err)
	}
}

// args is a run of the fake with kernel A, then extra flags, then the go
// test arguments.
func (f *fake) args(extra ...string) []string {
	self, err := os.Executable()
	if err != nil {
		f.t.Fatal(err)
	}
	a := []string{"-out", f.out, "-vmexec", self, "-a-kernel", f.imgA}
	a = append(a, extra...)
	return append(a, "--", ".", "-run=^$", "-bench=.")
}

// run runs kbab in-process; sig, when not nil, is its signal channel.
func (f *fake) run(sig chan os.Signal, args ...string) (code int, stdout, stderr string) {
	if sig == nil {
		sig = make(chan os.Signal, 1)
	}
	o, e := tempFile(f.t), tempFile(f.t)
	code = run(args, o, e, sig)
	return code, readAll(f.t, o), readAll(f.t, e)
}

func tempFile(t testing.TB) *os.File {
	f, err := os.CreateTemp(t.TempDir(), "std")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func readAll(t testing.TB, f *os.File) string {
	b, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// calls lists the fake's calls by their -append value.
func (f *fake) calls() []string {
	b, _ := os.ReadFile(filepath.Join(f.dir, "calls"))
	var c []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if l != "" {
			c = append(c, l)
		}
	}
	return c
}

// boots counts the distinct boot ids in an output file.
// bootIDs lists the distinct boot ids of a boot's output in order.
func bootIDs(out []byte) []string {
	var ids []string
	for l := range strings.Lines(string(out)) {
		if id, ok := abfile.BootID(l); ok && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids
}

func boots(t *testing.T, p string) int {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return len(bootIDs(b))
}

func TestABBAOrderAppendsAndReportsWorse(t *testing.T) {
	f := newFakeGo(t, true) // the real go test between kbab and vmexec
	code, stdout, stderr := f.run(nil, f.args("-b-kernel", f.imgB, "-b-append", "slow down", "-smp", "4", "-memory", "2G", "-accel", "tcg")...)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (B is worse)\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	var got []string
	for _, c := range f.calls() {
		if !strings.Contains(c, "smp=4 memory=2G accel=tcg ") {
			t.Errorf("vmexec call %q: want -smp 4 -memory 2G -accel tcg passed through", c)
		}
		got = append(got, strings.Fields(c)[0])
	}
	want := "kernel=bzImage-a kernel=bzImage-b kernel=bzImage-b kernel=bzImage-a kernel=bzImage-a kernel=bzImage-b"
	if strings.Join(got, " ") != want {
		t.Errorf("boot order %v, want ABBAAB: %s", got, want)
	}
	if !strings.Contains(f.calls()[1], `append="slow down"`) {
		t.Errorf("B's call %q does not carry -b-append as one argument", f.calls()[1])
	}
	for _, s := range []string{"A", "B"} {
		if n := boots(t, filepath.Join(f.out, s+".txt")); n != 3 {
			t.Errorf("%s.txt holds %d boots, want 3", s, n)
		}
	}
	if !strings.Contains(stdout, "boots: old 3 boots, new 3 boots") || !strings.Contains(stdout, "worse") {
		t.Errorf("report does not say 3 boots a side and worse:\n%s", stdout)
	}
	if l, _ := os.ReadFile(filepath.Join(f.out, "boots", "01-A.log")); !strings.Contains(string(l), " -count=1 -p=1 . -run=^$ -bench=.") {
		t.Errorf("boot 1's go test lacks -count=1 -p=1 before the user's arguments:\n%s", l)
	}
	if rep, _ := os.ReadFile(filepath.Join(f.out, "report.txt")); string(rep) != stdout {
		t.Errorf("report.txt differs from the report printed")
	}
	for _, w := range []string{"boot 1 of 6: A (bzImage-a)", "boot 2 of 6: B (bzImage-b slow down)", "boot 6 of 6: B finished", "left"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("progress lacks %q:\n%s", w, stderr)
		}
	}

	// With every boot finished, a rerun boots nothing and reports again.
	code2, stdout2, _ := f.run(nil, f.args("-b-kernel", f.imgB, "-b-append", "slow down", "-smp", "4", "-memory", "2G", "-accel", "tcg")...)
	if code2 != 1 || stdout2 != stdout || len(f.calls()) != 6 {
		t.Errorf("rerun of a finished run: exit %d, %d calls, same report %v; want 1, 6, true", code2, len(f.calls()), stdout2 == stdout)
	}
}

func TestSameKernelExitsZero(t *testing.T) {
	f := newFake(t)
	code, stdout, stderr := f.run(nil, f.args("-b-kernel", f.imgA)...)
	if code != 0 {
		t.Fatalf("A/A exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "boots: old 3 boots, new 3 boots") {
		t.Errorf("report does not say 3 boots a side:\n%s", stdout)
	}
}

// TestComparesInProcess: kbab judges the boots itself (no kbcompare is
// built or run) and writes the report to stdout and report.txt.
func TestComparesInProcess(t *testing.T) {
	f := newFake(t)
	self, _ := os.Executable()
	t.Chdir(pkgDir) // in the kbench module, as the README runs kbab
	code, stdout, stderr := f.run(nil, "-out", f.out, "-vmexec", self, "-boots", "1",
		"-a-kernel", f.imgA, "-b-kernel", f.imgA, "--", ".", "-run=^$", "-bench=.", "-count", "2", "-p=2")
	if code != 0 {
		t.Fatalf("exit %d, want 0\n%s\n%s", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(f.out, "bin", "kbcompare")); err == nil {
		t.Errorf("kbcompare was built into -out/bin: the comparison runs in-process")
	}
	if rep, err := os.ReadFile(filepath.Join(f.out, "report.txt")); err != nil || string(rep) != stdout {
		t.Errorf("report.txt (%v) is not the report on stdout:\n%s", err, rep)
	}
	if l, _ := os.ReadFile(filepath.Join(f.out, "boots", "01-A.log")); strings.Contains(string(l), "-count=1") || strings.Contains(string(l), "-p=1") {
		t.Errorf("kbab added -count=1 or -p=1 to flags that set -count and -p:\n%s", l)
	}
}

func TestFailedBootStopsAndRerunRetries(t *testing.T) {
	f := newFake(t)
	f.knob("fail-at", 3)
	args := f.args("-b-kernel", f.imgB, "-b-append", "slow")
	code, _, stderr := f.run(nil, args...)
	if code != exitBootFailed {
		t.Fatalf("exit %d, want %d for a failed boot\n%s", code, exitBootFailed, stderr)
	}
	for _, w := range []string{"boot 3 of 6 (B, bzImage-b slow) failed", "boots/03-B.txt", "keeps the 2 finished boots", "retry boot 3"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, stderr)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(f.out, "boots", "03-B.txt")); !strings.Contains(string(b), "--- FAIL") {
		t.Errorf("the failed boot's output was not kept: %q", b)
	}
	if a, b := boots(t, filepath.Join(f.out, "A.txt")), boots(t, filepath.Join(f.out, "B.txt")); a != 1 || b != 1 {
		t.Errorf("after the failure A.txt holds %d boots, B.txt %d; want 1 and 1", a, b)
	}

	// Another setting: refused, naming it.
	bad := f.args("-b-kernel", f.imgB, "-b-append", "slower")
	if code, _, stderr := f.run(nil, bad...); code != exitUsage || !strings.Contains(stderr, `kernel B's cmdline: was "slow", now "slower"`) {
		t.Errorf("resume with another -b-append: exit %d, stderr:\n%s\nwant %d naming -b-append", code, stderr, exitUsage)
	}
	writeImage(t, f.imgB, "kernel b, rebuilt")
	if code, _, stderr := f.run(nil, args...); code != exitUsage || !strings.Contains(stderr, "kernel B's contents (SHA-256)") {
		t.Errorf("resume with a rebuilt B: exit %d, stderr:\n%s\nwant %d naming -b-kernel's contents", code, stderr, exitUsage)
	}
	writeImage(t, f.imgB, "kernel b")

	// An append cut short by a crash: cut off on resume.
	af, _ := os.OpenFile(filepath.Join(f.out, "A.txt"), os.O_WRONLY|os.O_APPEND, 0)
	af.WriteString("# kbench kernel.boot_id: half-written\n")
	af.Close()

	code, stdout, stderr := f.run(nil, args...)
	if code != 1 {
		t.Fatalf("resumed run: exit %d, want 1\n%s\n%s", code, stdout, stderr)
	}
	for _, w := range []string{"resuming", "2 of 6 boots finished", "A.txt: 368 bytes, not the 330 of its finished boots' outputs", "boot 3 of 6: B"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("resumed run's stderr lacks %q:\n%s", w, stderr)
		}
	}
	if strings.Contains(stderr, "boot 2 of 6: B (") {
		t.Errorf("resume reran a finished boot:\n%s", stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(f.out, "boots", "03-B.try1.txt")); !strings.Contains(string(b), "--- FAIL") {
		t.Errorf("the retry did not keep the failed try's output as 03-B.try1.txt: %q", b)
	}
	if n := len(f.calls()); n != 7 {
		t.Errorf("%d vmexec calls, want 7 (2 finished, 1 failed, 4 resumed)", n)
	}
	for _, s := range []string{"A", "B"} {
		if n := boots(t, filepath.Join(f.out, s+".txt")); n != 3 {
			t.Errorf("%s.txt holds %d boots, want 3", s, n)
		}
	}
}

// A boot whose guest died (vmexec's exit status, through -outcome) is
// retried once, and the report says which boot and why; a second death
// stops the run as any failed boot does.
func TestDiedBootRetriedOnce(t *testing.T) {
	f := newFake(t)
	f.knob("die-at", 3)
	code, stdout, stderr := f.run(nil, f.args("-b-kernel", f.imgB, "-b-append", "slow")...)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (B slower) after the retry\n%s", code, stderr)
	}
	why := "boot 3 of 6 (B): its first try's guest died (vmexec exit 82, fake): guest kernel panic: Kernel panic - not syncing: Fatal exception in interrupt"
	if !strings.Contains(stdout, "\nretried: "+why+"\n") {
		t.Errorf("the report does not say which boot was retried and why:\n%s", stdout)
	}
	if report, _ := os.ReadFile(filepath.Join(f.out, "report.txt")); !strings.Contains(string(report), "retried: "+why) {
		t.Errorf("report.txt lacks the retry:\n%s", report)
	}
	if !strings.Contains(stderr, "03-B.log; its guest died (vmexec exit 82, fake): guest kernel panic") || !strings.Contains(stderr, "kbab: boot 3 of 6 (B): retrying it once\n") {
		t.Errorf("stderr does not announce the retry:\n%s", stderr)
	}
	if n := len(f.calls()); n != 7 {
		t.Errorf("%d vmexec calls, want 7 (6 boots, one twice)", n)
	}
	if _, err := os.Stat(filepath.Join(f.out, "boots", "03-B.try1.outcome")); err != nil {
		t.Errorf("the lost try's outcome was not kept: %v", err)
	}
	// Printed again from the state on a rerun: the retry stays recorded.
	if _, stdout2, _ := f.run(nil, f.args("-b-kernel", f.imgB, "-b-append", "slow")...); !strings.Contains(stdout2, "retried: "+why) {
		t.Errorf("the rerun's report lost the retry:\n%s", stdout2)
	}

	// Twice in a row: stop with exit 3, as a failed boot.
	f = newFake(t)
	f.knob("die-at", "2 3")
	code, stdout, stderr = f.run(nil, f.args("-b-kernel", f.imgB)...)
	if code != exitBootFailed || stdout != "" || strings.Count(stderr, "guest kernel panic") < 2 || !strings.Contains(stderr, "rerun the same command to retry boot 2") {
		t.Errorf("two deaths: exit %d, stdout %q, stderr:\n%s\nwant %d", code, stdout, stderr, exitBootFailed)
	}
	// A test that fails is no death: no retry.
	f = newFake(t)
	f.knob("fail-at", 2)
	if code, _, stderr := f.run(nil, f.args("-b-kernel", f.imgB)...); code != exitBootFailed || strings.Contains(stderr, "retrying") || len(f.calls()) != 2 {
		t.Errorf("a failed test: exit %d, %d calls, stderr:\n%s\nwant %d, no retry", code, len(f.calls()), stderr, exitBootFailed)
	}
}

func TestRepeatedBootIDFails(t *testing.T) {
	f := newFake(t)
	os.WriteFile(filepath.Join(f.dir, "same-id"), nil, 0o666)
	code, _, stderr := f.run(nil, f.args("-b-kernel", f.imgA)...)
	if code != exitBootFailed || !strings.Contains(stderr, "boot 2 of 6 (B) failed") || !strings.Contains(stderr, "not a fresh boot") {
		t.Errorf("exit %d, want %d with boot 2 not a fresh boot:\n%s", code, exitBootFailed, stderr)
	}
}

func TestInterruptKillsTheBootAndKeepsFinished(t *testing.T) {
	f := newFake(t)
	f.knob("hang-at", 2)
	sig, hung := interruptOnHang(f)
	args := f.args("-b-kernel", f.imgA)
	code, _, stderr := f.run(sig, args...)
	var pid int
	select {
	case pid = <-hung:
	default: // it never hung: the checks below say so
	}
	if code != exitInterrupted {
		t.Fatalf("exit %d, want %d\n%s", code, exitInterrupted, stderr)
	}
	for _, w := range []string{"boot 2 of 6 (B): interrupt", "killing it", "keeps the 1 finished boots"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, stderr)
		}
	}
	if !gone(pid) {
		t.Errorf("the hung fake vmexec (pid %d) outlived the interrupt", pid)
	}
	if a, b := boots(t, filepath.Join(f.out, "A.txt")), boots(t, filepath.Join(f.out, "B.txt")); a != 1 || b != 0 {
		t.Errorf("after Ctrl-C A.txt holds %d boots, B.txt %d; want 1 and 0", a, b)
	}
	if code, stdout, stderr := f.run(nil, args...); code != 0 || !strings.Contains(stdout, "boots: old 3 boots, new 3 boots") {
		t.Errorf("resumed after Ctrl-C: exit %d, want 0 with 3 boots a side\n%s\n%s", code, stdout, stderr)
	}
}

// interruptOnHang returns a signal channel that gets SIGINT once the
// fake hangs (its hang-at knob), and the hung fake's pid, and shortens
// kbab's grace for the test.
func interruptOnHang(f *fake) (chan os.Signal, <-chan int) {
	sig := make(chan os.Signal, 1)
	hung := make(chan int, 1)
	go func() {
		for {
			if b, err := os.ReadFile(filepath.Join(f.dir, "hung.pid")); err == nil && len(b) > 0 {
				pid, _ := strconv.Atoi(string(b))
				hung <- pid
				sig <- syscall.SIGINT
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	grace := interruptGrace
	interruptGrace = 300 * time.Millisecond
	f.t.Cleanup(func() { interruptGrace = grace })
	return sig, hung
}

// interruptAt runs kbab with the fake's call n hanging (a VM that
// ignores Ctrl-C) and SIGINT sent once it hangs (interruptOnHang); pid
// is the hung fake's.
func (f *fake) interruptAt(n int, args ...string) (code int, stdout, stderr string, pid int) {
	f.knob("hang-at", n)
	defer os.Remove(filepath.Join(f.dir, "hang-at"))
	os.Remove(filepath.Join(f.dir, "hung.pid"))
	sig, hung := interruptOnHang(f)
	code, stdout, stderr = f.run(sig, args...)
	select {
	case pid = <-hung:
	default:
	}
	return code, stdout, stderr, pid
}

// gone waits up to 5 s for pid to be gone (or a zombie no one waits for).
func gone(pid int) bool {
	for range 250 {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return true
		}
		if f := strings.Fields(string(b)); len(f) > 2 && f[2] == "Z" {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

func TestBadOptions(t *testing.T) {
	img := filepath.Join(t.TempDir(), "bzImage")
	writeImage(t, img, "k")
	notKernel := filepath.Join(t.TempDir(), "vmlinux")
	os.WriteFile(notKernel, make([]byte, 4096), 0o666)
	out := filepath.Join(t.TempDir(), "out")
	base := []string{"-out", out, "-a-kernel", img, "-b-kernel", img}
	lists := t.TempDir()
	list, badList, badAppend, two := filepath.Join(lists, "ok"), filepath.Join(lists, "bad"), filepath.Join(lists, "append"), filepath.Join(lists, "two")
	os.WriteFile(list, []byte("K1 "+img+"\nK2 "+img+"\nK3 "+img+" quiet\n"), 0o666)
	os.WriteFile(badList, []byte("K1 "+img+"\nK2 "+notKernel+"\n"), 0o666)
	os.WriteFile(badAppend, []byte("K1 "+img+"\nK2 "+img+" panic=0\n"), 0o666)
	os.WriteFile(two, []byte("K1 "+img+"\nK2 "+img+" quiet\n"), 0o666)
	pk := []string{"--", "./seccompbench"}
	cat := slices.Concat[[]string]
	for _, c := range []struct {
		args []string
		want string
	}{
		{cat([]string{"-a-kernel", img, "-b-kernel", img}, pk), "-out is required"},
		{cat([]string{"-out", out, "-b-kernel", img}, pk), "-a-kernel is required"},
		{cat([]string{"-out", out, "-a-kernel", img}, pk), "-b-kernel is required"},
		{cat(base, []string{"-boots", "0"}, pk), "-boots 0: want a number of boots"},
		{cat(base, []string{"-boots", "x"}, pk), `invalid value "x" for flag -boots`},
		{cat(base, []string{"-smp", "0"}, pk), `-smp accepts 1-256 vCPUs (got "0")`},
		{cat(base, []string{"-smp", "999"}, pk), `-smp accepts 1-256 vCPUs (got "999")`},
		{cat(base, []string{"-memory", "2GB"}, pk), `-memory accepts a size in M or G (MiB, GiB) of at least 128M, such as 512M or 2G (got "2GB")`},
		{cat(base, []string{"-memory", "2048"}, pk), `-memory accepts a size in M or G (MiB, GiB) of at least 128M, such as 512M or 2G (got "2048")`},
		{cat(base, []string{"-memory", "64M"}, pk), `-memory accepts at least 128M`},
		{cat(base, []string{"-accel", "hvf"}, pk), `-accel accepts auto, kvm or tcg (got "hvf")`},
		{cat(base, []string{"-b-append", "a\nb"}, pk), `-b-append accepts printable text`},
		{cat(base, []string{"-a-append", strings.Repeat("x", 1792)}, pk), `-a-append accepts at most 1791 bytes`},
		// vmexec's own keys, refused as vmexec refuses them.
		{cat(base, []string{"-a-append", "rdinit=/bin/sh"}, pk), `-a-append accepts kernel parameters but vmexec's own (console, 8250.nr_uarts, panic, softlockup_panic, rdinit) (got "rdinit=/bin/sh": vmexec sets rdinit=/init itself)`},
		{cat(base, []string{"-b-append", "mitigations=off panic=0"}, pk), `-b-append accepts kernel parameters but vmexec's own (console, 8250.nr_uarts, panic, softlockup_panic, rdinit) (got "panic=0": vmexec sets panic=-1 itself)`},
		{cat([]string{"-out", out, "-a-kernel", img, "-b-kernel", notKernel}, pk), "-b-kernel " + notKernel + ": not a kernel image"},
		{cat(base, []string{"-frobnicate"}, pk), "flag provided but not defined: -frobnicate"},
		{base, "no packages"},
		{cat(base, pk, []string{"-exec", "x"}), "go test flag -exec: kbab sets -exec"},
		{cat(base, pk, []string{"-json"}), "go test flag -json: kbcompare reads"},
		{cat(base, pk, []string{"-c"}), "go test flag -c"},
		{cat([]string{"-out", out, "-a-kernel", img + ".missing", "-b-kernel", img}, pk), "-a-kernel: open " + img + ".missing"},
		{cat(base, []string{"-vmexec", "/nonexistent/vmexec"}, pk), "-vmexec /nonexistent/vmexec"},
		{cat(base, []string{"-target", "0"}, pk), "want a percentage above 0"},
		{cat(base, []string{"-budget", "1h"}, pk), "-budget goes with -target"},
		{cat(base, []string{"-target", "5%", "-boots", "3"}, pk), "-boots goes with a fixed A/B or -series: -target and -bisect plan the boots"},
		{cat(base, []string{"-target", "5%"}, pk, []string{"-count=0"}), "with -target or -duet, -count=N with N of 1 or more"},
		{cat(base, []string{"-target", "5%"}, pk, []string{"-count", "3"}), "with -target or -duet, -count=N with N of 1 or more"},
		{cat(base, []string{"-target", "5%"}, pk, []string{"-bench", "Load"}), "write it as -bench=VALUE"},
		{cat([]string{"-out", out, "-series", list, "-bisect", list}, pk), "-series and -bisect exclude each other"},
		{cat([]string{"-out", out, "-series", list, "-a-kernel", img}, pk), "-a-kernel goes with an A/B: a kernel list (-series, -bisect) gives the kernels"},
		{cat([]string{"-out", out, "-series", list, "-profile", "3"}, pk), "-profile goes with an A/B"},
		{cat([]string{"-out", out, "-series", list, "-duet"}, pk), "-duet goes with an A/B"},
		{cat([]string{"-out", out, "-series", list, "-row", "x"}, pk), "-row goes with -bisect"},
		{cat([]string{"-out", out, "-series", list, "-target", "5%"}, pk), "-target goes with an A/B or -bisect"},
		{cat([]string{"-out", out, "-series", list + ".missing"}, pk), "kernel list: open " + list + ".missing"},
		{cat([]string{"-out", out, "-series", badList}, pk), badList + " line 2 " + notKernel + ": not a kernel image"},
		{cat([]string{"-out", out, "-series", badAppend}, pk), badAppend + " line 2's cmdline accepts kernel parameters but vmexec's own"},
		{cat([]string{"-out", out, "-series", two, "-boots", "3"}, pk), "-boots 3 over 2 kernels: the smallest p a permutation of a row's boots can give a change is 0.1, above the level 0.05, so no change could be found; -boots 4 reaches it"},
		{cat([]string{"-out", out, "-bisect", list}, pk), "-bisect needs -row"},
		{cat([]string{"-out", out, "-bisect", list, "-row", "("}, pk), "-row (: error parsing regexp"},
		{cat([]string{"-out", out, "-bisect", list, "-row", "x", "-boots", "3"}, pk), "-boots goes with a fixed A/B or -series"},
		{cat([]string{"-out", out, "-bisect", two, "-row", "x"}, pk), "-bisect " + two + ": 2 kernels: want a good one, a bad one and at least one image"},
		{cat(base, []string{"-row", "x"}, pk), "-row goes with -bisect"},
	} {
		var stderr bytes.Buffer
		code := run(c.args, os.Stdout, &stderr, make(chan os.Signal))
		if code != exitUsage || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("kbab %s: exit %d, stderr %q; want %d and %q", strings.Join(c.args, " "), code, stderr.String(), exitUsage, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "kbab.json")); err == nil {
		t.Errorf("a bad option left a run in %s", out)
	}
}

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		"a":          "a",
		"a b":        "'a b'",
		"it's":       `"it's"`,
		"":           "''",
		`x="a b"`:    `'x="a b"'`,
		"/p/vmlinuz": "/p/vmlinuz",
	} {
		if got := quote(in); got != want {
			t.Errorf("quote(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestABBA(t *testing.T) {
	var s string
	for i := range 8 {
		s += string(rune('A' + balancedOrder(i, 2)))
	}
	if s != "ABBAABBA" {
		t.Errorf("order %s, want ABBAABBA", s)
	}
}

// A kbab.json that a crash or an edit left broken is refused, naming
// the file, where and what was expected, and boots nothing (a kernel's
// file is written anew from the boots': TestCheckOutputs).
func TestBrokenResumeStateRefused(t *testing.T) {
	f := newFake(t)
	f.knob("fail-at", 4)
	args := f.args("-b-kernel", f.imgA)
	if code, _, stderr := f.run(nil, args...); code != exitBootFailed {
		t.Fatalf("exit %d, want %d after 3 boots\n%s", code, exitBootFailed, stderr)
	}
	state := filepath.Join(f.out, "kbab.json")
	good, _ := os.ReadFile(state)
	goodA, _ := os.ReadFile(filepath.Join(f.out, "A.txt"))
	st, err := parseState(good)
	if err != nil || len(st.Boots) != 3 {
		t.Fatalf("state after 3 boots: %+v, %v", st, err)
	}
	first := bootFile(f.out, st.Boots[0])
	if out, _ := os.ReadFile(first); !bytes.Equal(out, goodA) {
		t.Fatalf("A.txt (%d bytes) is not its one boot's output, %s (%d bytes)", len(goodA), first, len(out))
	}
	calls := len(f.calls())
	for _, c := range []struct {
		name         string
		json, a      []byte
		want, wantAt string
	}{
		{"kbab.json cut short", good[:len(good)/2], goodA, "unexpected end of JSON input", "kbab.json: "},
		{"kbab.json empty", nil, goodA, "unexpected end of JSON input", "kbab.json: "},
		{"kbab.json not JSON", []byte("\x00\x00\x00"), goodA, "invalid character", "kbab.json: "},
		{"a boot's kernel changed", bytes.Replace(good, []byte(`"kernel": "B"`), []byte(`"kernel": "A"`), 1), goodA,
			`is kernel "A": want "B", its place in the balanced order`, "kbab.json: boots[1] (boot 2)"},
	} {
		os.WriteFile(state, c.json, 0o666)
		os.WriteFile(filepath.Join(f.out, "A.txt"), c.a, 0o666)
		code, _, stderr := f.run(nil, args...)
		if code != exitUsage || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, c.wantAt) || !strings.HasPrefix(stderr, "kbab: ") {
			t.Errorf("%s: exit %d, stderr %q; want %d, naming %q and %q", c.name, code, stderr, exitUsage, c.wantAt, c.want)
		}
		if n := len(f.calls()); n != calls {
			t.Errorf("%s: %d boots ran", c.name, n-calls)
		}
	}
	// A finished boot's output gone: refused, naming it.
	os.WriteFile(state, good, 0o666)
	os.WriteFile(filepath.Join(f.out, "A.txt"), goodA, 0o666)
	os.Rename(first, first+".away")
	if code, _, stderr := f.run(nil, args...); code != exitUsage || !strings.Contains(stderr, "01-A.txt: no such file or directory: boot 1's output, which kbab.json says finished") {
		t.Errorf("boot 1's output gone: exit %d, stderr %q", code, stderr)
	}
	os.Rename(first+".away", first)
	// Restored, the run resumes and finishes.
	os.Remove(filepath.Join(f.dir, "fail-at"))
	if code, stdout, stderr := f.run(nil, args...); code != 0 || !strings.Contains(stdout, "boots: old 3 boots, new 3 boots") || !strings.Contains(stderr, "3 of 6 boots finished") {
		t.Errorf("restored: exit %d\n%s\n%s", code, stdout, stderr)
	}
}
