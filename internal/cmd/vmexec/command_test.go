//go:build linux

package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/fingerprint"
	"github.com/kbench/kbench/internal/options"
	"github.com/kbench/kbench/internal/vmflags"
)

// kernelVar names the kernel image the guest boot tests use.
var kernelVar = options.String("KBENCH_VM_KERNEL", "the path of a kernel image (bzImage, /boot/vmlinuz-*)", "", checkImage,
	"`internal/cmd/vmexec`'s tests boot it in QEMU and run test binaries in the guest (unset: the guest boot tests skip)")

// vmexecBin is vmexec built for the command tests (CGO_ENABLED=0: a
// static init, as the package doc recommends), by the first test that
// needs it (a fuzzing worker never does).
var (
	vmexecBin   string
	vmexecOnce  sync.Once
	vmexecBuild string // why it could not be built
	testDir     string // removed when the tests end
)

func TestMain(m *testing.M) {
	if os.Getenv(fakeQEMUEnv) != "" {
		os.Exit(fakeQEMU(os.Args[1:]))
	}
	if mode := os.Getenv("GO_VMEXEC_HELPER"); mode != "" {
		os.Exit(helper(mode))
	}
	if err := options.Parse(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var err error
	if testDir, err = os.MkdirTemp("", "vmexec-test-"); err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(testDir)
	os.Exit(code)
}

// builtVMExec builds vmexec once; "" when there is no go tool.
func builtVMExec(t *testing.T) string {
	t.Helper()
	vmexecOnce.Do(func() {
		goTool, err := exec.LookPath("go")
		if err != nil {
			return
		}
		bin := filepath.Join(testDir, "vmexec")
		cmd := exec.Command(goTool, "build", "-o", bin, ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			vmexecBuild = fmt.Sprintf("building vmexec: %v\n%s", err, out)
			return
		}
		vmexecBin = bin
	})
	if vmexecBuild != "" {
		t.Fatal(vmexecBuild)
	}
	return vmexecBin
}

// helper is what the test binary does when vmexec runs it in a guest.
func helper(mode string) int {
	switch mode {
	case "echo":
		fmt.Print("out: first\n")
		fmt.Fprint(os.Stderr, "err: second\n")
		fmt.Print("out: \x00\r\n\xffbinary\n")
		return 3
	case "facts":
		wd, _ := os.Getwd()
		fmt.Printf("cwd=%s\nuid=%d\nargs=%q\n", wd, os.Getuid(), os.Args[1:])
		fingerprint.Write(os.Stdout, fingerprint.Collect("/"))
		if _, err := os.Stat("testdata/guest.txt"); err != nil {
			fmt.Printf("package file: %v\n", err)
		}
		var st syscall.Statfs_t
		syscall.Statfs("/tmp", &st)
		fmt.Printf("tmp.tmpfs=%v\n", st.Type == 0x01021994)
		f, err := os.CreateTemp("", "w")
		fmt.Printf("tmp.writable=%v\n", err == nil)
		if err == nil {
			os.Remove(f.Name())
		}
		return 0
	case "write":
		// What a profiling run leaves: a KBENCH_PROFILE file and a
		// -test.cpuprofile file.
		os.MkdirAll(os.Getenv("KBENCH_PROFILE"), 0o755)
		os.WriteFile(filepath.Join(os.Getenv("KBENCH_PROFILE"), "row.pprof"), bytes.Repeat([]byte("pprof\x00"), 300000), 0o644)
		for _, a := range os.Args[1:] {
			if v, ok := strings.CutPrefix(a, "-test.cpuprofile="); ok {
				os.WriteFile(v, []byte("cpu"), 0o644)
			}
		}
		return 0
	case "kill":
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
	case "crash":
		// The guest kernel panics (sysrq-trigger's crash), as root only.
		if err := os.WriteFile("/proc/sysrq-trigger", []byte("c"), 0); err != nil {
			fmt.Println(err)
		}
		time.Sleep(time.Minute)
	case "sleep":
		fmt.Println("ready")
		time.Sleep(time.Hour)
	}
	return 99
}

func needVMExec(t *testing.T) {
	t.Helper()
	if builtVMExec(t) == "" {
		t.Skip("no go tool to build vmexec with")
	}
}

func needKernel(t *testing.T) string {
	t.Helper()
	needVMExec(t)
	if *kernelVar == "" {
		t.Skip("set KBENCH_VM_KERNEL to a kernel image (e.g. /boot/vmlinuz-$(uname -r)) to boot real guests")
	}
	if _, err := exec.LookPath("qemu-system-x86_64"); err != nil {
		t.Skip("no qemu-system-x86_64 (apt-get install qemu-system-x86)")
	}
	return *kernelVar
}

// kernelLink gives the test its own path to the image, by which
// noQEMULeft finds any QEMU the test left.
func kernelLink(t *testing.T, image string) string {
	p := filepath.Join(t.TempDir(), filepath.Base(image))
	if err := os.Symlink(image, p); err != nil {
		t.Fatal(err)
	}
	// modulesFor looks beside the image: keep Debian's layout.
	return p
}

// noQEMULeft fails the test if a process still has marker on its command line.
func noQEMULeft(t *testing.T, marker string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var left []string
		procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, p := range procs {
			b, err := os.ReadFile(p)
			if err == nil && bytes.Contains(b, []byte(marker)) {
				left = append(left, filepath.Base(filepath.Dir(p))+": "+string(bytes.ReplaceAll(b, []byte{0}, []byte{' '}))[:60])
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still running after vmexec ended: %q", left)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

type result struct {
	stdout, stderr string
	err            error
	ws             syscall.WaitStatus
}

func vmexec(t *testing.T, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(vmexecBin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Env = append(os.Environ(), env...)
	err := cmd.Run()
	r := result{stdout.String(), stderr.String(), err, 0}
	if cmd.ProcessState != nil {
		r.ws = cmd.ProcessState.Sys().(syscall.WaitStatus)
	}
	return r
}

func TestNoQEMU(t *testing.T) {
	needVMExec(t)
	img := fakeImage(t, t.TempDir(), 4096)
	cmd := exec.Command(vmexecBin, "-kernel", img, "/bin/true")
	cmd.Env = []string{"PATH=" + t.TempDir()}
	out, err := cmd.CombinedOutput()
	if err == nil || cmd.ProcessState.ExitCode() != vmflags.ExitQEMU || !strings.Contains(string(out), "install QEMU") || !strings.Contains(string(out), "qemu-system-x86") {
		t.Errorf("without QEMU: %v\n%s", err, out)
	}
}

func TestNotAKernel(t *testing.T) {
	needVMExec(t)
	dir := t.TempDir()
	text := filepath.Join(dir, "vmlinux")
	os.WriteFile(text, bytes.Repeat([]byte{0x7f, 'E', 'L', 'F'}, 1024), 0o644)
	for img, want := range map[string]string{text: "not a kernel image", filepath.Join(dir, "none"): "no such file"} {
		r := vmexec(t, nil, "-kernel", img, "/bin/true")
		if r.ws.ExitStatus() != vmflags.ExitFailed || !strings.Contains(r.stderr, want) {
			t.Errorf("-kernel %s: exit %d, stderr %q, want %q", img, r.ws.ExitStatus(), r.stderr, want)
		}
	}
	for _, bad := range [][]string{{"-smp", "0"}, {"-append", "rdinit=/bin/sh"}, {"-append", "panic=0"}, {"-kernel", "arch/x86/boot/bzImage"}} {
		r := vmexec(t, nil, append(append([]string{"-kernel", text}, bad...), "/bin/true")...)
		if r.ws.ExitStatus() != 2 || !strings.HasPrefix(r.stderr, "vmexec: "+bad[0]+" ") {
			t.Errorf("%q: exit %d, stderr %q; want 2 and the flag named", bad, r.ws.ExitStatus(), r.stderr)
		}
	}
}

func TestNeverReachesInit(t *testing.T) {
	needVMExec(t)
	if _, err := exec.LookPath("qemu-system-x86_64"); err != nil {
		t.Skip("no qemu-system-x86_64 (apt-get install qemu-system-x86)")
	}
	// A valid header with garbage behind it: QEMU loads it, it never
	// prints a line.
	img := fakeImage(t, t.TempDir(), 2<<20)
	start := time.Now()
	r := vmexec(t, nil, "-kernel", img, "-accel", "tcg", "-boot-timeout", "8s", "/bin/true")
	t.Logf("%v: %s", time.Since(start), r.stderr)
	if r.ws.ExitStatus() != vmflags.ExitDied && r.ws.ExitStatus() != vmflags.ExitQEMU || !(strings.Contains(r.stderr, "did not reach init within -boot-timeout=8s") || strings.Contains(r.stderr, "before the kernel")) {
		t.Errorf("exit %d, stderr %q", r.ws.ExitStatus(), r.stderr)
	}
	checkLogNamed(t, r.stderr)
	noQEMULeft(t, img)
}

// checkLogNamed checks that the full console log is named and kept.
func checkLogNamed(t *testing.T, stderr string) {
	t.Helper()
	_, after, ok := strings.Cut(stderr, "full console log: ")
	if !ok {
		t.Errorf("no console log named in %q", stderr)
		return
	}
	p := strings.Fields(after)[0]
	if _, err := os.Stat(p); err != nil {
		t.Errorf("console log: %v", err)
	}
	os.Remove(p)
}

func guestArgs(img string, extra ...string) []string {
	self, _ := os.Executable()
	return append(append([]string{"-kernel", img}, extra...), self, "-test.run=^$")
}

func TestGuestOutputAndStatus(t *testing.T) {
	img := kernelLink(t, needKernel(t))
	start := time.Now()
	r := vmexec(t, []string{"GO_VMEXEC_HELPER=echo"}, guestArgs(img)...)
	t.Logf("boot and run: %v", time.Since(start))
	if want := "out: first\nout: \x00\r\n\xffbinary\n"; r.stdout != want {
		t.Errorf("stdout %q, want %q", r.stdout, want)
	}
	if !strings.HasSuffix(r.stderr, "err: second\n") {
		t.Errorf("stderr %q", r.stderr)
	}
	if r.ws.ExitStatus() != 3 {
		t.Errorf("exit status %d (%v), want the binary's 3", r.ws.ExitStatus(), r.err)
	}
	noQEMULeft(t, img)
}

func TestGuestFacts(t *testing.T) {
	img := kernelLink(t, needKernel(t))
	os.MkdirAll("testdata", 0o755)
	os.WriteFile("testdata/guest.txt", []byte("x"), 0o644)
	defer os.Remove("testdata/guest.txt")
	r := vmexec(t, []string{"GO_VMEXEC_HELPER=facts"}, guestArgs(img, "-smp", "1", "-memory", "1G", "-append", "nokaslr")...)
	if r.err != nil {
		t.Fatalf("%v\n%s\n%s", r.err, r.stdout, r.stderr)
	}
	wd, _ := os.Getwd()
	fields, _ := fingerprint.Parse(strings.NewReader(r.stdout))
	get := func(k string) string {
		v, _ := lookupField(fields, k)
		return v
	}
	for _, want := range []string{"cwd=" + wd + "\n", fmt.Sprintf("uid=%d\n", os.Getuid()), `args=["-test.run=^$"]`, "tmp.tmpfs=true", "tmp.writable=true"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("guest output lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "package file:") {
		t.Errorf("the package directory's files are missing in the guest:\n%s", r.stdout)
	}
	if !strings.Contains(get("kernel.cmdline"), "nokaslr") || get("vm.vcpus") != "1" || get("vm.memory") != "1G" ||
		!strings.HasPrefix(get("vm.engine"), "QEMU emulator version") || get("vm.host.kernel") == "" ||
		get("vm.pinning") == "" || !strings.HasPrefix(get("vm.accel"), "kvm") && !strings.HasPrefix(get("vm.accel"), "tcg") ||
		!strings.HasPrefix(get("vm.boot"), "init ran") || get("cpu.online") != "0" || get("vm.entry") == "" {
		t.Errorf("fingerprint:\n%s", r.stdout)
	}
	if d := modulesFor(*kernelVar); d != "" && !strings.Contains(get("vm.guest.modules"), "veth (loaded)") {
		t.Errorf("veth not loaded: %q", get("vm.guest.modules"))
	}
	t.Logf("vm fields: accel %q; entry %q; pinning %q; boot %q; mounts %q", get("vm.accel"), get("vm.entry"), get("vm.pinning"), get("vm.boot"), get("vm.guest.mounts"))
	// Each boot is a new boot.
	r2 := vmexec(t, []string{"GO_VMEXEC_HELPER=facts"}, guestArgs(img, "-smp", "1")...)
	f2, _ := fingerprint.Parse(strings.NewReader(r2.stdout))
	if id, _ := lookupField(f2, "kernel.boot_id"); id == get("kernel.boot_id") || len(id) != 36 {
		t.Errorf("boot ids %q then %q", get("kernel.boot_id"), id)
	}
	noQEMULeft(t, img)
}

func lookupField(fields []fingerprint.Field, key string) (string, bool) {
	for _, f := range fields {
		if f.Key == key {
			return f.Value, true
		}
	}
	return "", false
}

func TestGuestOutputsComeBack(t *testing.T) {
	img := kernelLink(t, needKernel(t))
	dir := t.TempDir()
	prof := filepath.Join(dir, "prof")
	cpu := filepath.Join(dir, "cpu.out")
	self, _ := os.Executable()
	r := vmexec(t, []string{"GO_VMEXEC_HELPER=write", "KBENCH_PROFILE=" + prof}, "-kernel", img, self, "-test.cpuprofile="+cpu)
	if r.err != nil {
		t.Fatalf("%v: %s", r.err, r.stderr)
	}
	if b, err := os.ReadFile(filepath.Join(prof, "row.pprof")); err != nil || !bytes.Equal(b, bytes.Repeat([]byte("pprof\x00"), 300000)) {
		t.Errorf("KBENCH_PROFILE file: %d bytes, %v", len(b), err)
	}
	if b, err := os.ReadFile(cpu); err != nil || string(b) != "cpu" {
		t.Errorf("-test.cpuprofile file: %q, %v", b, err)
	}
	noQEMULeft(t, img)
}

func TestGuestKilled(t *testing.T) {
	img := kernelLink(t, needKernel(t))
	r := vmexec(t, []string{"GO_VMEXEC_HELPER=kill"}, guestArgs(img)...)
	if !r.ws.Signaled() || r.ws.Signal() != syscall.SIGKILL {
		t.Errorf("vmexec ended %v (%v), want killed by SIGKILL as the binary was\n%s", r.ws, r.err, r.stderr)
	}
	noQEMULeft(t, img)
}

func TestGuestPanic(t *testing.T) {
	img := kernelLink(t, needKernel(t))
	if os.Getuid() != 0 {
		t.Skip("the guest's binary runs as vmexec's user; only root can crash its kernel through /proc/sysrq-trigger")
	}
	start := time.Now()
	r := vmexec(t, []string{"GO_VMEXEC_HELPER=crash"}, guestArgs(img)...)
	if r.ws.ExitStatus() != vmflags.ExitDied || !strings.Contains(r.stderr, "guest kernel panic: Kernel panic - not syncing") {
		t.Errorf("exit %d, stderr %q", r.ws.ExitStatus(), r.stderr)
	}
	t.Logf("panic reported after %v", time.Since(start))
	checkLogNamed(t, r.stderr)
	noQEMULeft(t, img)
}

func TestGuestInterrupted(t *testing.T) {
	img := kernelLink(t, needKernel(t))
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGQUIT, syscall.SIGKILL} {
		ws, stderr := signalWhenReady(t, []string{"GO_VMEXEC_HELPER=sleep"}, sig, guestArgs(img)...)
		if !ws.Signaled() || ws.Signal() != sig {
			t.Errorf("after %v vmexec ended %v: %s", sig, ws, stderr)
		}
		noQEMULeft(t, img)
	}
}

// signalWhenReady runs vmexec, sends it sig once the binary in the guest
// printed "ready", and returns how vmexec ended and its stderr.
func signalWhenReady(t *testing.T, env []string, sig syscall.Signal, args ...string) (syscall.WaitStatus, string) {
	t.Helper()
	cmd := exec.Command(vmexecBin, args...)
	cmd.Env = append(os.Environ(), env...)
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if line != "ready\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("guest said %q (%v): %s", line, err, stderr.String())
	}
	cmd.Process.Signal(sig)
	cmd.Wait()
	return cmd.ProcessState.Sys().(syscall.WaitStatus), stderr.String()
}
