//go:build linux

package main

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/vmflags"
	"github.com/u-root/u-root/pkg/cpio"
)

func TestParseFlagsContract(t *testing.T) {
	// The A/B driver's call: go test -exec 'vmexec -kernel PATH -append ARGS -smp N -memory SIZE -accel MODE'.
	c, err := parseFlags(strings.Fields("-kernel /k -append nokaslr -smp 8 -memory 4G -accel tcg /tmp/x.test -test.v -test.run=^A$"), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.kernel != "/k" || c.append != "nokaslr" || c.smp != 8 || c.memory != "4G" || c.accel != "tcg" {
		t.Errorf("parsed %+v", c)
	}
	if strings.Join(c.args, " ") != "/tmp/x.test -test.v -test.run=^A$" {
		t.Errorf("program args %q", c.args)
	}
	if strings.Join(c.modules, ",") != "veth" || c.pin != "auto" {
		t.Errorf("defaults: modules %q pin %q", c.modules, c.pin)
	}
}

func TestParseFlagsBad(t *testing.T) {
	for _, tc := range []struct{ args, want string }{
		{"/tmp/x.test", "-kernel is required"},
		{"-kernel /k", "no program"},
		{"-kernel /k -smp 0 x", "-smp accepts 1-256"},
		{"-kernel /k -memory 2X x", "-memory accepts"},
		{"-kernel /k -memory 64M x", "at least 128M"},
		{"-kernel /k -accel xen x", "-accel accepts auto, kvm or tcg"},
		{"-kernel /k -pin maybe x", "-pin accepts"},
		{"-kernel /k -boot-timeout 0s x", "-boot-timeout"},
		{"-kernel /k -nosuch x", "flag provided but not defined"},
		// vmexec's own keys: the guest would never report, or hang.
		{"-kernel /k -append rdinit=/bin/sh x", `-append accepts kernel parameters but vmexec's own (console, 8250.nr_uarts, panic, softlockup_panic, rdinit) (got "rdinit=/bin/sh": vmexec sets rdinit=/init itself)`},
		{"-kernel /k -append panic=0 x", `(got "panic=0": vmexec sets panic=-1 itself)`},
		{"-kernel /k -tcg-append softlockup_panic=0 x", `-tcg-append accepts kernel parameters but vmexec's own`},
	} {
		var stderr bytes.Buffer
		_, err := parseFlags(strings.Fields(tc.args), &stderr)
		if err == nil || !strings.Contains(err.Error()+stderr.String(), tc.want) {
			t.Errorf("%q: err %v, want one naming %q", tc.args, err, tc.want)
		}
	}
}

// A relative -kernel is read in the package's directory, where go test
// -exec runs vmexec: one that is not there is refused with the absolute
// path to try.
func TestParseFlagsRelativeKernel(t *testing.T) {
	root := t.TempDir()
	pkg := filepath.Join(root, "sub", "pkg")
	os.MkdirAll(pkg, 0o755)
	os.MkdirAll(filepath.Join(root, "linux", "arch", "x86", "boot"), 0o755)
	fakeImage(t, filepath.Join(root, "linux", "arch", "x86", "boot"), 4096)
	os.WriteFile(filepath.Join(root, "sub", "go.mod"), []byte("module m\n"), 0o644)
	t.Chdir(pkg)
	for k, want := range map[string]string{
		// Found up the tree: that path.
		"linux/arch/x86/boot/vmlinuz-0.0-fake": "-kernel linux/arch/x86/boot/vmlinuz-0.0-fake: no such file in " + pkg + ", where vmexec runs: go test -exec runs it in each package's directory, so a relative path names a file there; give the absolute path: -kernel " + filepath.Join(root, "linux/arch/x86/boot/vmlinuz-0.0-fake"),
		// Nowhere: $(pwd).
		"bzImage": `give an absolute path, such as -kernel "$(pwd)/bzImage" where the path is relative to`,
	} {
		_, err := parseFlags([]string{"-kernel", k, "x.test"}, io.Discard)
		if err == nil || err.Error() != want && !strings.HasSuffix(err.Error(), want) {
			t.Errorf("-kernel %s: %v\nwant %s", k, err, want)
		}
	}
	// A relative path that is there is the user's to give.
	os.WriteFile(filepath.Join(pkg, "bzImage"), nil, 0o644)
	if _, err := parseFlags([]string{"-kernel", "bzImage", "x.test"}, io.Discard); err != nil {
		t.Errorf("a relative -kernel that exists: %v", err)
	}
}

// fakeImage writes a file with a bzImage header and garbage after it.
func fakeImage(t *testing.T, dir string, size int) string {
	b := make([]byte, size)
	for i := range b {
		b[i] = byte(i * 7)
	}
	copy(b[0x202:], "HdrS")
	binary.LittleEndian.PutUint16(b[0x206:], 0x020f)
	p := filepath.Join(dir, "vmlinuz-0.0-fake")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCheckImage(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.txt")
	os.WriteFile(text, bytes.Repeat([]byte("not a kernel\n"), 100), 0o644)
	short := filepath.Join(dir, "short")
	os.WriteFile(short, []byte("HdrS"), 0o644)
	for p, want := range map[string]string{
		filepath.Join(dir, "none"): "no such file",
		text:                       `no bzImage header ("HdrS" at 0x202)`,
		short:                      "too short",
		dir:                        "not a regular file",
	} {
		if err := checkImage(p); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("checkImage(%s) = %v, want %q", p, err, want)
		}
	}
	if err := checkImage(fakeImage(t, dir, 4096)); err != nil {
		t.Errorf("a bzImage header was refused: %v", err)
	}
	if k := os.Getenv("KBENCH_VM_KERNEL"); k != "" {
		if err := checkImage(k); err != nil {
			t.Errorf("KBENCH_VM_KERNEL: %v", err)
		}
	}
}

func TestModulesFor(t *testing.T) {
	dir := t.TempDir()
	boot := filepath.Join(dir, "boot")
	os.MkdirAll(boot, 0o755)
	img := fakeImage(t, boot, 4096)
	if d := modulesFor(img); d != "" {
		t.Errorf("modulesFor found %q where there is none", d)
	}
	os.MkdirAll(filepath.Join(dir, "lib/modules/0.0-fake/kernel/drivers/net"), 0o755)
	if d := modulesFor(img); d != filepath.Join(dir, "lib/modules/0.0-fake") {
		t.Errorf("modulesFor = %q", d)
	}
}

func TestFindModules(t *testing.T) {
	dir := t.TempDir()
	net := filepath.Join(dir, "kernel/drivers/net")
	os.MkdirAll(net, 0o755)
	os.WriteFile(filepath.Join(net, "veth.ko"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(net, "dummy-thing.ko.xz"), []byte("x"), 0o644)
	got, err := findModules(dir, []string{"veth", "dummy_thing"})
	if err != nil || len(got) != 2 || filepath.Base(got[0]) != "veth.ko" || filepath.Base(got[1]) != "dummy-thing.ko.xz" {
		t.Errorf("findModules = %q, %v", got, err)
	}
	if _, err := findModules(dir, []string{"nosuch"}); err == nil || !strings.Contains(err.Error(), "module nosuch: not in") {
		t.Errorf("a missing module: %v", err)
	}
	// Debian's real tree: veth has no dependencies, and is found.
	if k := os.Getenv("KBENCH_VM_KERNEL"); k != "" {
		if d := modulesFor(k); d != "" {
			got, err := findModules(d, []string{"veth"})
			if err != nil || len(got) == 0 || !strings.HasPrefix(filepath.Base(got[len(got)-1]), "veth.ko") {
				t.Errorf("veth in %s: %q, %v", d, got, err)
			}
		}
	}
}

func TestInitramfsContents(t *testing.T) {
	dir := t.TempDir()
	pkg := filepath.Join(dir, "pkg")
	os.MkdirAll(filepath.Join(pkg, "testdata"), 0o750)
	os.MkdirAll(filepath.Join(pkg, ".git", "objects"), 0o755)
	os.WriteFile(filepath.Join(pkg, ".git", "objects", "x"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(pkg, "testdata", "in.txt"), []byte("hello"), 0o640)
	os.Symlink("testdata/in.txt", filepath.Join(pkg, "link"))
	ir := newInitramfs()
	ir.tree(pkg)
	// A dynamically linked program brings its loader and libraries.
	self, _ := os.Executable()
	if ir.executable(self, self); ir.err != nil {
		t.Fatal(ir.err)
	}
	ir.add(cpio.StaticFile("/etc/kbench/vm", "vm.vcpus: 2\n", 0o644))
	ir.add(cpio.CharDev("/dev/console", 0o600, 5, 1))
	var buf bytes.Buffer
	if err := ir.write(&buf); err != nil {
		t.Fatal(err)
	}
	recs, err := cpio.ReadAllRecords(cpio.Newc.Reader(bytes.NewReader(buf.Bytes())))
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]cpio.Record{}
	for i, r := range recs {
		byName[r.Name] = r
		// Every parent comes before what it holds.
		for d := filepath.Dir(r.Name); d != "."; d = filepath.Dir(d) {
			if _, ok := byName[d]; !ok {
				t.Errorf("record %d %s precedes its directory %s", i, r.Name, d)
			}
		}
	}
	rel := func(p string) string { return strings.TrimPrefix(p, "/") }
	in, ok := byName[rel(filepath.Join(pkg, "testdata/in.txt"))]
	if !ok {
		t.Fatalf("package file missing; have %d records", len(recs))
	}
	if content, _ := io.ReadAll(io.NewSectionReader(in, 0, int64(in.FileSize))); string(content) != "hello" || in.Mode&0o777 != 0o640 || in.UID != uint64(os.Getuid()) {
		t.Errorf("package file: %q mode %o uid %d", content, in.Mode, in.UID)
	}
	if d := byName[rel(filepath.Join(pkg, "testdata"))]; d.Mode != cpio.S_IFDIR|0o750 {
		t.Errorf("package dir mode %o", d.Mode)
	}
	if l := byName[rel(filepath.Join(pkg, "link"))]; l.Mode&cpio.S_IFMT != cpio.S_IFLNK {
		t.Errorf("symlink kept as mode %o", l.Mode)
	}
	if _, ok := byName[rel(filepath.Join(pkg, ".git/objects/x"))]; ok {
		t.Error(".git was copied")
	}
	if c := byName["dev/console"]; c.Mode != cpio.S_IFCHR|0o600 || c.Rmajor != 5 || c.Rminor != 1 {
		t.Errorf("/dev/console: %+v", c.Info)
	}
	if _, ok := byName[rel(self)]; !ok {
		t.Errorf("the program %s is missing", self)
	}
	libs, err := sharedLibs(self)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range libs {
		if _, ok := byName[rel(l)]; !ok {
			t.Errorf("library %s missing", l)
		}
	}
	t.Logf("%d records, %d bytes, libraries %q", len(recs), buf.Len(), libs)
}

func TestFrames(t *testing.T) {
	var b bytes.Buffer
	fw := &frameWriter{w: &b}
	big := bytes.Repeat([]byte{0, '\n', 0xff}, maxFrame/2)
	fw.write(frameStdout, []byte("line\r\n\x00"))
	fw.write(frameStderr, big)
	fw.write(frameHello, nil)
	var got []byte
	fr := newGuestReader(&b)
	f, err := fr.next()
	if err != nil || f.typ != frameStdout || string(f.payload) != "line\r\n\x00" {
		t.Fatalf("first frame %q %q %v", f.typ, f.payload, err)
	}
	for {
		f, err = fr.next()
		if err != nil || f.typ != frameStderr {
			break
		}
		got = append(got, f.payload...)
	}
	if !bytes.Equal(got, big) || f.typ != frameHello || err != nil {
		t.Errorf("big payload came back %d of %d bytes, then %q %v", len(got), len(big), f.typ, err)
	}
	if _, err := fr.next(); !errors.Is(err, io.EOF) {
		t.Errorf("at the end: %v", err)
	}
	corrupt := []byte{frameStdout, 0xff, 0xff, 0xff, 0xff}
	if _, err := newGuestReader(bytes.NewReader(corrupt)).next(); err == nil || !strings.Contains(err.Error(), "corrupt") {
		t.Errorf("a corrupt length: %v", err)
	}
	// Each error says where the stream went wrong and what was expected.
	stream := func(frames ...[]byte) []byte { return bytes.Join(frames, nil) }
	hello := []byte{frameHello, 0, 0, 0, 0}
	for in, want := range map[string]string{
		string(stream(hello, corrupt)):                    "the guest's data port, byte 5: a 'O' frame of 4294967295 bytes, more than the 1048576 a frame holds",
		string(stream(hello, []byte{'Z', 0, 0, 0, 0})):    `the guest's data port, byte 5: frame type 'Z', want one of "HOEMPDXB"`,
		string(stream(hello, []byte{frameStdout, 9, 0})):  "the guest's data port, byte 5: a frame header cut short after 3 of its 5 bytes",
		string(stream(hello, []byte{'O', 9, 0, 0, 0, 1})): "the guest's data port, byte 5: a 'O' frame cut short after 1 of its 9 bytes",
	} {
		fr := newGuestReader(strings.NewReader(in))
		fr.next()
		if _, err := fr.next(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
	if _, err := newHostReader(bytes.NewReader(hello)).next(); err == nil || !strings.Contains(err.Error(), `the host's data port, byte 0: frame type 'H', want one of "S"`) {
		t.Errorf("a guest frame from the host: %v", err)
	}
}

func TestDecodeFrames(t *testing.T) {
	exit := func(p string) frame { return frame{typ: frameExit, payload: []byte(p), off: 42} }
	if st, err := decodeExit(exit(`{"code":3,"signal":0,"err":""}`)); err != nil || *st != (exitStatus{Code: 3}) {
		t.Errorf("exit 3: %+v %v", st, err)
	}
	for p, want := range map[string]string{
		`null`:                  "not a JSON object",
		``:                      "not a JSON object",
		`{"code":3}{}`:          "after top-level value",
		`{"code":256}`:          "code 256",
		`{"code":-1}`:           "code -1",
		`{"signal":65}`:         "signal 65",
		`{"code":1,"signal":9}`: "both a code and a signal",
		`{"code":"1"}`:          "cannot unmarshal",
	} {
		if _, err := decodeExit(exit(p)); err == nil || !strings.Contains(err.Error(), "the guest's data port, byte 42: 'X' frame") || !strings.Contains(err.Error(), want) {
			t.Errorf("exit frame %q: %v, want %q", p, err, want)
		}
	}
}

func TestConsoleScan(t *testing.T) {
	var log bytes.Buffer
	c := newConsole()
	r, w := io.Pipe()
	go c.scan(r, &log)
	select {
	case <-c.alive:
		t.Fatal("alive before any line")
	default:
	}
	io.WriteString(w, "SeaBIOS\r\n[    0.000000] Linux version 6.1.0-57-amd64 (debian-kernel@lists.debian.org)\r\n")
	select {
	case <-c.alive:
	case <-time.After(5 * time.Second):
		t.Fatal("the kernel's first line did not count as alive")
	}
	io.WriteString(w, "[    1.0] vmexec-init: mount devtmpfs on /dev: no such device (the kernel needs CONFIG_DEVTMPFS)\n")
	for i := range 40 {
		io.WriteString(w, "[    1.1] noise "+string(rune('a'+i%26))+"\n")
	}
	io.WriteString(w, "[    2.0] Kernel panic - not syncing: No working init found.\n")
	select {
	case <-c.panic:
		if l := c.state().panicAt; l != "Kernel panic - not syncing: No working init found." {
			t.Errorf("panic line %q", l)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no panic reported")
	}
	w.Close()
	<-c.done
	if tail := c.state().lines; len(tail) != consoleTail || !strings.HasPrefix(tail[len(tail)-1], "[    2.0] Kernel panic") {
		t.Errorf("tail has %d lines, last %q", len(tail), tail[len(tail)-1])
	}
	if m := c.state().init; len(m) != 1 || !strings.Contains(m[0], "CONFIG_DEVTMPFS") {
		t.Errorf("init messages %q", m)
	}
	if !strings.Contains(log.String(), "SeaBIOS\r\n") {
		t.Error("the log is not a copy of the console")
	}
	if l := c.state().panicAt; l != "Kernel panic - not syncing: No working init found." {
		t.Errorf("panicLine %q after the end", l)
	}
	// The first panic line and the first oops line (die()'s, its
	// timestamp dropped) are the ones kept; a WARN is no oops.
	for _, tc := range []struct{ console, panic, oops string }{
		{"Kernel panic - not syncing: first\n---[ end Kernel panic - not syncing: second ]---\n", "Kernel panic - not syncing: first", ""},
		{"[    3.2] WARNING: CPU: 1 PID: 9 at kernel/x.c:1 f+0x1/0x2\n", "", ""},
		{"[  123.456789] general protection fault, probably for non-canonical address 0xdead: 0000 [#1] PREEMPT SMP NOPTI\n[  124.0] Oops: 0002 [#2] SMP\n",
			"", "general protection fault, probably for non-canonical address 0xdead: 0000 [#1] PREEMPT SMP NOPTI"},
	} {
		c := newConsole()
		c.scan(strings.NewReader(tc.console), io.Discard)
		if p, o := c.state().panicAt, c.state().oopsAt; p != tc.panic || o != tc.oops {
			t.Errorf("%q: panic %q, oops %q; want %q, %q", tc.console, p, o, tc.panic, tc.oops)
		}
	}
}

func TestHint(t *testing.T) {
	for lines, want := range map[string]string{
		"": "console stayed empty",
		"VFS: Unable to mount root fs on unknown":            "CONFIG_BLK_DEV_INITRD",
		"Kernel panic - not syncing: No working init found.": "did not run the initramfs's /init",
		"Out of memory: Killed process 1":                    "",
		"all is well":                                        "",
	} {
		var l []string
		if lines != "" {
			l = []string{lines}
		}
		if got := hint(l, "tcg"); (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("hint(%q) = %q, want %q", lines, got, want)
		}
	}
	if got := hint(nil, "kvm"); !strings.Contains(got, "KVM does not run this kernel") {
		t.Errorf("an empty console under KVM: %q", got)
	}
}

func TestPassEnv(t *testing.T) {
	for kv, want := range map[string]bool{
		"KBENCH_PULSE=off": true, "GOMAXPROCS=2": true, "GODEBUG=x": true, "PATH=/bin": true, "HOME=/root": true,
		"TERM=xterm": false, "SSH_AUTH_SOCK=/x": false, "LD_PRELOAD=x": false,
	} {
		if passEnv(kv) != want {
			t.Errorf("passEnv(%q) = %v", kv, !want)
		}
	}
}

func TestTreeRoot(t *testing.T) {
	dir := t.TempDir()
	pkg := filepath.Join(dir, "mod", "internal", "p")
	os.MkdirAll(pkg, 0o755)
	if got := treeRoot(pkg); got != pkg {
		t.Errorf("outside a module: %q, want the working directory", got)
	}
	os.WriteFile(filepath.Join(dir, "mod", "go.mod"), []byte("module m\n"), 0o644)
	if got := treeRoot(pkg); got != filepath.Join(dir, "mod") {
		t.Errorf("in a module: %q, want its root", got)
	}
	if got := treeRoot("/"); got != "" {
		t.Errorf("treeRoot(/) = %q", got)
	}
}

// sharedLibs finds every library ldd names, for the test binary and the
// programs the guest gets (redis-server's list is long, ip's has libbpf),
// and names a library that cannot be found.
func TestSharedLibs(t *testing.T) {
	self, _ := os.Executable()
	progs := []string{self}
	for _, p := range []string{"redis-server", "ip", "true"} {
		if path, err := exec.LookPath(p); err == nil {
			progs = append(progs, path)
		}
	}
	lddPath, lddErr := exec.LookPath("ldd")
	for _, p := range progs {
		libs, err := sharedLibs(p)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if len(libs) == 0 {
			t.Logf("%s is static", p)
			continue
		}
		if !strings.Contains(libs[0], "ld-") {
			t.Errorf("%s: the loader is not first: %q", p, libs)
		}
		if lddErr != nil {
			t.Logf("no ldd to check %s's %d libraries against", p, len(libs))
			continue
		}
		out, err := exec.Command(lddPath, p).Output()
		if err != nil {
			t.Fatalf("ldd %s: %v", p, err)
		}
		for _, f := range strings.Fields(string(out)) {
			if !strings.HasPrefix(f, "/") {
				continue
			}
			found := false
			for _, l := range libs {
				a, _ := filepath.EvalSymlinks(l)
				b, _ := filepath.EvalSymlinks(f)
				found = found || a == b
			}
			if !found {
				t.Errorf("%s: sharedLibs %q lacks ldd's %s", p, libs, f)
			}
		}
		t.Logf("%s: %d libraries", p, len(libs))
	}
	// A static program has none.
	if bin := builtVMExec(t); bin != "" {
		if libs, err := sharedLibs(bin); len(libs) != 0 || err != nil {
			t.Errorf("the static vmexec: %q, %v", libs, err)
		}
	}
	if _, err := sharedLibs("unit_test.go"); err == nil || !strings.Contains(err.Error(), "not an ELF executable") {
		t.Errorf("a text file: %v", err)
	}
	// A library that is nowhere: true with libc.so.6 renamed libq.so.6.
	truePath, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no true on PATH to break")
	}
	b, _ := os.ReadFile(truePath)
	i := bytes.Index(b, []byte("libc.so.6\x00"))
	if i < 0 {
		t.Skipf("%s names no libc.so.6", truePath)
	}
	copy(b[i:], "libq.so.6")
	broken := filepath.Join(t.TempDir(), "true")
	os.WriteFile(broken, b, 0o755)
	if _, err := sharedLibs(broken); err == nil || !strings.Contains(err.Error(), "libq.so.6") {
		t.Errorf("a missing library: %v", err)
	}
}

func TestPVH(t *testing.T) {
	dir := t.TempDir()
	if _, err := pvhKernel(fakeImage(t, dir, 8192), strings.Repeat("0", 64), dir); err == nil {
		t.Error("a garbage bzImage gave a vmlinux")
	}
	pvh := func(p string) bool {
		f, err := elf.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		return hasPVHEntry(f)
	}
	if self, _ := os.Executable(); pvh(self) {
		t.Error("the test binary has a PVH note")
	}
	k := os.Getenv("KBENCH_VM_KERNEL")
	if k == "" {
		t.Skip("set KBENCH_VM_KERNEL to check a real kernel's PVH vmlinux")
	}
	p, err := pvhKernel(k, digest(t, k), dir)
	if err != nil {
		t.Skipf("%s: no PVH vmlinux: %v", k, err)
	}
	if !pvh(p) {
		t.Errorf("%s: no PVH note", p)
	}
	// The second call reuses the extracted file.
	fi, _ := os.Stat(p)
	p2, err := pvhKernel(k, digest(t, k), dir)
	fi2, _ := os.Stat(p2)
	if err != nil || p2 != p || !fi2.ModTime().Equal(fi.ModTime()) {
		t.Errorf("second extraction: %s %v", p2, err)
	}
}

func TestOutputs(t *testing.T) {
	env := map[string]string{"KBENCH_PROFILE": "prof", "GOCOVERDIR": "/tmp/cov"}
	got := outputs("/m/pkg", []string{"-test.cpuprofile=cpu.out", "-test.outputdir=/out", "-test.trace=/abs/trace.out",
		"-test.memprofile=sub/mem.out", "-test.v", "-test.run=^$", "-test.bench=cpuprofile=x"}, func(k string) string { return env[k] })
	want := "/out/cpu.out /out/sub/mem.out /abs/trace.out /m/pkg/prof /tmp/cov"
	if strings.Join(got, " ") != want {
		t.Errorf("outputs = %q, want %s", got, want)
	}
	if got := outputs("/m/pkg", []string{"-test.coverprofile=c.out"}, func(string) string { return "" }); strings.Join(got, " ") != "/m/pkg/c.out" {
		t.Errorf("without -test.outputdir: %q", got)
	}
	h := &host{outputs: []string{"/m/pkg/prof", "/out/cpu.out"}}
	for p, want := range map[string]bool{"/m/pkg/prof/a.pprof": true, "/out/cpu.out": true, "/m/pkg/profx": false,
		"/m/pkg/prof/../../etc/passwd": false, "/etc/passwd": false} {
		if h.isOutput(p) != want {
			t.Errorf("isOutput(%s) = %v", p, !want)
		}
	}
}

func digest(t *testing.T, p string) string {
	sum, err := vmflags.ImageDigest(p)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}
