//go:build linux

package main

// The boot loop against the fake QEMU (fakeqemu_test.go), in this
// process, so that every way a boot ends runs in go test ./... on any
// machine: no QEMU and no kernel image needed.

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/vmflags"
)

// testGraces keep the tests short; qemuEnd stays long, since it bounds
// what must not time out.
var testGraces = graces{powerOff: 300 * time.Millisecond, panicEnd: 300 * time.Millisecond, qemuEnd: 10 * time.Second}

// syncBuffer is a buffer the boot's goroutines write while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor waits until the buffer holds sub.
func (s *syncBuffer) waitFor(t *testing.T, sub string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(s.String(), sub); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q after 30s; have %q", sub, s.String())
		}
	}
}

// fakeRun is one vmexec run in this process with the fake as its QEMU.
type fakeRun struct {
	t              *testing.T
	dir, img       string
	cfg            *config
	stdout, stderr *syncBuffer
	sigs           chan os.Signal
	env            runEnv
}

// newFakeRun sets up a run of the fake guest with vmexec's flags (after
// defaults for a quick TCG boot) and the program's arguments.
func newFakeRun(t *testing.T, guest string, flags []string, progArgs ...string) *fakeRun {
	t.Setenv(fakeQEMUEnv, guest)
	t.Setenv(fakeKVMEnv, "")
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	// The guest gets the working directory's tree: an empty one.
	t.Chdir(t.TempDir())
	r := &fakeRun{t: t, dir: t.TempDir(), stdout: &syncBuffer{}, stderr: &syncBuffer{}, sigs: make(chan os.Signal, 1)}
	r.img = fakeImage(t, r.dir, 4096)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"-kernel", r.img, "-qemu", self, "-accel", "tcg", "-pvh", "off",
		"-console", filepath.Join(r.dir, "console.log"), "-boot-timeout", "60s"}, flags...)
	r.setFlags(append(append(args, "/bin/true"), progArgs...))
	r.env = runEnv{stdout: r.stdout, stderr: r.stderr, signals: r.sigs, kvmDevice: filepath.Join(r.dir, "no-kvm"), grace: testGraces}
	return r
}

func (r *fakeRun) setFlags(args []string) {
	cfg, err := parseFlags(args, io.Discard)
	if err != nil {
		r.t.Fatal(err)
	}
	r.cfg = cfg
}

// withKVM gives the run a KVM device that opens, and the fake a guest for
// KVM boots.
func (r *fakeRun) withKVM(guest string) {
	r.env.kvmDevice = filepath.Join(r.dir, "kvm")
	if err := os.WriteFile(r.env.kvmDevice, nil, 0o600); err != nil {
		r.t.Fatal(err)
	}
	r.t.Setenv(fakeKVMEnv, guest)
}

// run runs vmexec; no QEMU may be left after it.
func (r *fakeRun) run() (*exitStatus, syscall.Signal, error) {
	r.t.Helper()
	st, sig, err := run(r.cfg, r.env)
	noQEMULeft(r.t, r.img)
	return st, sig, err
}

// fails runs vmexec and checks that it failed with the exit status
// (vmflags.ExitFailed, ...) and an error holding each of want, and named
// the console log, which it kept.
func (r *fakeRun) fails(status int, want ...string) string {
	r.t.Helper()
	st, sig, err := r.run()
	if err == nil || st != nil || sig != 0 {
		r.t.Fatalf("run: status %+v, signal %v, error %v; want an error\nstderr: %s", st, sig, err, r.stderr)
	}
	if got := statusOf(err); got != status {
		r.t.Errorf("exit status %d (%s), want %d (%s): %v", got, vmflags.OutcomeOf(got), status, vmflags.OutcomeOf(status), err)
	}
	for _, w := range append(want, "full console log: "+r.cfg.console) {
		if !strings.Contains(err.Error(), w) {
			r.t.Errorf("error lacks %q:\n%v", w, err)
		}
	}
	return err.Error()
}

// exits runs vmexec and checks the binary's status it returned.
func (r *fakeRun) exits(want exitStatus) {
	r.t.Helper()
	st, sig, err := r.run()
	if err != nil || sig != 0 || st == nil || *st != want {
		r.t.Fatalf("run: status %+v, signal %v, error %v; want %+v\nstderr: %s", st, sig, err, want, r.stderr)
	}
}

func TestBootOutputAndStatus(t *testing.T) {
	r := newFakeRun(t, "ok", nil)
	out := t.TempDir()
	prof, cpu := filepath.Join(out, "prof"), filepath.Join(out, "cpu.out")
	os.MkdirAll(filepath.Join(prof, "adir"), 0o755)
	t.Setenv("KBENCH_PROFILE", prof)
	full := filepath.Join(out, "full")
	r.setFlags(append(r.cfg.flagArgs(), "-append", "nokaslr", "/bin/true", "-test.v", "-test.cpuprofile="+cpu, "-test.trace="+full))
	// An output that cannot be written: the file behind it is full.
	if err := os.Symlink("/dev/full", full); err != nil {
		t.Fatal(err)
	}
	r.exits(exitStatus{Code: 3})
	if want := "out: first\nout: \x00\r\n\xffbinary\nargs=[\"-test.v\" \"-test.cpuprofile=" + cpu + "\" \"-test.trace=" + full + "\"]\n"; r.stdout.String() != want {
		t.Errorf("stdout %q, want %q", r.stdout, want)
	}
	for _, w := range []string{"err: second\n", "vmexec: guest: facts: vm.accel: tcg (-accel tcg; TCG measures emulation, not hardware), -cpu max; vm.boot: init ran ",
		"; vm.pinning: ", `vmexec: the guest sent "/etc/passwd", which is no output of the binary; dropped`,
		"vmexec: the binary's output " + filepath.Join(prof, "adir") + ": open " + filepath.Join(prof, "adir") + ": is a directory",
		"vmexec: the binary's output " + full + ": write " + full + ": no space left on device"} {
		if !strings.Contains(r.stderr.String(), w) {
			t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
		}
	}
	if b, err := os.ReadFile(filepath.Join(prof, "row.pprof")); err != nil || !bytes.Equal(b, bytes.Repeat([]byte("pprof\x00"), 300000)) {
		t.Errorf("KBENCH_PROFILE file: %d bytes, %v", len(b), err)
	}
	if b, err := os.ReadFile(cpu); err != nil || string(b) != "cpu" {
		t.Errorf("-test.cpuprofile file: %q, %v", b, err)
	}
	log, _ := os.ReadFile(r.cfg.console)
	for _, w := range []string{"=== vmexec: " + r.cfg.qemu + " -nodefaults", "rdinit=/init nokaslr tsc=unstable no_timer_check -chardev", "Linux version 0.0.0-fake", "=== vm.boot: init ran "} {
		if !strings.Contains(string(log), w) {
			t.Errorf("console log lacks %q:\n%s", w, log)
		}
	}
}

// flagArgs gives back a config's vmexec flags, to run it again with other
// program arguments.
func (c *config) flagArgs() []string {
	return []string{"-kernel", c.kernel, "-qemu", c.qemu, "-accel", c.accel, "-pvh", c.pvh, "-tcg-append", c.tcgAppend, "-console", c.console,
		"-boot-timeout", c.bootTimeout.String(), "-kvm-probe", c.kvmProbe.String(), "-pin", c.pin}
}

func TestBootPinsThroughMonitor(t *testing.T) {
	r := newFakeRun(t, "ok", []string{"-smp", "1", "-pin", "auto"})
	r.exits(exitStatus{Code: 3})
	if !strings.Contains(r.stderr.String(), "vm.pinning: vCPU0->CPU") {
		t.Errorf("no pinning through the fake's monitor:\n%s", r.stderr)
	}
	r = newFakeRun(t, "ok", []string{"-smp", "256", "-pin", "auto"})
	r.exits(exitStatus{Code: 3})
	if !strings.Contains(r.stderr.String(), "vm.pinning: not pinned (256 vCPUs, ") {
		t.Errorf("256 vCPUs pinned?\n%s", r.stderr)
	}
}

func TestBootBinaryEnds(t *testing.T) {
	newFakeRun(t, "exit-signal", nil).exits(exitStatus{Signal: 9})
	newFakeRun(t, "init-error", nil).exits(exitStatus{Err: "mount devtmpfs on /dev: no such device (the kernel needs CONFIG_DEVTMPFS)"})
	// No ACPI: vmexec ends QEMU once the status is in.
	newFakeRun(t, "no-poweroff", nil).exits(exitStatus{})
	// A corrupt stream after the status does not matter.
	newFakeRun(t, "corrupt-after-exit", nil).exits(exitStatus{})
	// A helper QEMU started dies with it.
	newFakeRun(t, "leak-child", nil).exits(exitStatus{})
}

func TestBootPanic(t *testing.T) {
	newFakeRun(t, "panic", nil).fails(vmflags.ExitDied, "guest kernel panic: Kernel panic - not syncing: VFS: Unable to mount root fs on unknown-block(0,0)",
		"likely cause: the kernel did not run the initramfs's /init", "last console lines:\n  [    0.000000] Linux version 0.0.0-fake")
	// A QEMU that goes on after the panic is killed.
	newFakeRun(t, "panic-hang", nil).fails(vmflags.ExitDied, "guest kernel panic: Kernel panic - not syncing: No working init found.",
		"likely cause: the kernel did not run the initramfs's /init")
	// An oops that killed the binary: the guest died, not the binary.
	newFakeRun(t, "oops", nil).fails(vmflags.ExitDied, "the guest kernel oopsed: int3: 0000 [#1] PREEMPT SMP NOPTI; the binary then ended by signal segmentation fault")
	// A panic after the binary's end leaves its status.
	r := newFakeRun(t, "panic-after-exit", nil)
	r.env.grace.powerOff = time.Minute
	r.exits(exitStatus{})
}

func TestBootNeverReachesInit(t *testing.T) {
	newFakeRun(t, "no-init", []string{"-boot-timeout", "1s"}).fails(vmflags.ExitDied, "the kernel did not reach init within -boot-timeout=1s",
		"last console lines:", "Out of memory: Killed process 1 (init)")
	newFakeRun(t, "silent", []string{"-boot-timeout", "1s"}).fails(vmflags.ExitDied, "the kernel did not reach init within -boot-timeout=1s",
		"likely cause: the console stayed empty")
	newFakeRun(t, "silent", []string{"-boot-timeout", "1s", "-accel", "kvm"}).fails(vmflags.ExitDied, "likely cause: KVM does not run this kernel on this host")
	// Init's own messages say more than any hint.
	newFakeRun(t, "no-port", nil).fails(vmflags.ExitDied, "QEMU ended (exit status 0) before the kernel reached init",
		"the guest's init said: open /dev/ttyS1: no such device (the kernel needs CONFIG_SERIAL_8250")
}

// The progress guard: a guest that sends nothing for -stall is frozen,
// its vCPUs' registers named; one whose init still beats is not, however
// long its binary stays silent.
func TestBootStall(t *testing.T) {
	stalls := func(guest string, flags ...string) *fakeRun {
		r := newFakeRun(t, guest, append([]string{"-smp", "2"}, flags...))
		r.cfg.stall = time.Second // parseFlags asks for 4 heartbeats at least
		return r
	}
	stalls("hang").fails(vmflags.ExitFroze, "the guest sent no byte for -stall=1s (no console line, no output, no heartbeat from init): frozen",
		"where the vCPUs were (QEMU's info registers -a):\n  vCPU0 RIP ffffffff81000010\n  vCPU1 RIP ffffffff81000110\n")
	// Init's heartbeat is progress: 6 s of a silent binary pass
	// -stall=4s, twenty beats of 200 ms a window (at -stall=1s, and once
	// at 2s, a loaded machine, load average 15, let a window pass
	// between beats).
	r := stalls("beating")
	r.cfg.stall = 4 * time.Second
	r.exits(exitStatus{})
}

func TestBootSignals(t *testing.T) {
	// SIGQUIT too: go test sends it a minute after the binary's own
	// -test.timeout, whose goroutine dump came back by then.
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT} {
		r := newFakeRun(t, "hang", nil)
		done := make(chan struct{})
		go func() {
			defer close(done)
			r.stdout.waitFor(t, "ready\n")
			r.sigs <- sig
		}()
		st, got, err := r.run()
		<-done
		if got != sig || st != nil || err != nil {
			t.Errorf("after %v: status %+v, signal %v, error %v", sig, st, got, err)
		}
		if want := "vmexec: interrupted by " + sig.String() + "; the guest was killed\n"; !strings.HasSuffix(r.stderr.String(), want) {
			t.Errorf("after %v: stderr %q, want %q", sig, r.stderr, want)
		}
	}
	// Before init runs the binary too; a signal pending when the boot
	// starts ends it at once (QEMU is started, then killed by the wait).
	for guest, sig := range map[string]syscall.Signal{"silent": syscall.SIGQUIT, "ok": syscall.SIGTERM} {
		r := newFakeRun(t, guest, nil)
		r.sigs <- sig
		if st, got, err := r.run(); got != sig || st != nil || err != nil {
			t.Errorf("%s, %v: status %+v, signal %v, error %v", guest, sig, st, got, err)
		}
	}
}

func TestBootQEMUKilled(t *testing.T) {
	r := newFakeRun(t, "killed", nil)
	r.fails(vmflags.ExitDied, "QEMU ended (signal: killed) while the test binary ran, with no exit status from the guest")
	if r.stdout.String() != "ready\n" {
		t.Errorf("stdout %q", r.stdout)
	}
	newFakeRun(t, "killed-early", nil).fails(vmflags.ExitDied, "QEMU ended (signal: killed) before the kernel reached init")
	newFakeRun(t, "qemu-error", nil).fails(vmflags.ExitQEMU, "QEMU ended (exit status 1) before the kernel printed a line",
		"QEMU said:\nqemu-system-x86_64: -accel kvm: failed to initialize kvm: Permission denied")
}

func TestBootBadFrames(t *testing.T) {
	newFakeRun(t, "corrupt", nil).fails(vmflags.ExitFailed, "the guest's data port, byte 5: a 'O' frame of 4294967295 bytes, more than the 1048576 a frame holds: the stream is corrupt")
	newFakeRun(t, "bad-exit", nil).fails(vmflags.ExitFailed, "the guest's data port, byte 5: 'X' frame \"{\\\"code\\\":300}\"", "code 300")
	newFakeRun(t, "bad-exit-at-end", nil).fails(vmflags.ExitFailed, "the guest's data port, byte 5: 'X' frame \"null\"", "not a JSON object")
	newFakeRun(t, "two-hellos", nil).fails(vmflags.ExitFailed, "the guest's data port, byte 5: 'H' frame \"\": want one empty hello frame")
	newFakeRun(t, "two-exits", nil).fails(vmflags.ExitFailed, "the guest's data port, byte 20: 'X' frame \"{\\\"code\\\":1}\": want one exit frame")
	newFakeRun(t, "panic-bad-exit", nil).fails(vmflags.ExitFailed, "the guest's data port, byte 5: 'X' frame \"{\\\"signal\\\":99}\"", "signal 99")
	newFakeRun(t, "flood", nil).fails(vmflags.ExitFailed, "the guest's data port, byte 5: 'X' frame \"[]\"", "not a JSON object")
}

func TestKVMProbe(t *testing.T) {
	auto := []string{"-accel", "auto", "-kvm-probe", "1s"}
	facts := func(r *fakeRun, want string) {
		t.Helper()
		if !strings.Contains(r.stderr.String(), "vmexec: guest: facts: "+want) {
			t.Errorf("facts lack %q:\n%s", want, r.stderr)
		}
	}
	// KVM boots the kernel: the verdict is cached, and the next run boots
	// KVM with no probe, so a kernel silent under KVM then fails.
	r := newFakeRun(t, "ok", auto)
	r.withKVM("ok")
	r.exits(exitStatus{Code: 3})
	facts(r, "vm.accel: kvm (-accel auto), -cpu host")
	r.withKVM("silent")
	r.stdout, r.stderr = &syncBuffer{}, &syncBuffer{}
	r.env.stdout, r.env.stderr = r.stdout, r.stderr
	r.setFlags(append(r.cfg.flagArgs(), "-boot-timeout", "2s", "/bin/true"))
	r.fails(vmflags.ExitDied, "the kernel did not reach init within -boot-timeout=2s", "likely cause: KVM does not run this kernel on this host")

	// A silent kernel, or a QEMU that cannot start KVM: TCG, with a
	// warning, and the verdict cached.
	for kvm, reason := range map[string]string{
		"silent":     "KVM did not boot this kernel (no console output within -kvm-probe=1s)",
		"qemu-error": "KVM did not boot this kernel (QEMU ended (exit status 1): qemu-system-x86_64: -accel kvm: failed to initialize kvm: Permission denied)",
	} {
		r := newFakeRun(t, "ok", auto)
		r.withKVM(kvm)
		r.exits(exitStatus{Code: 3})
		if !strings.Contains(r.stderr.String(), "vmexec: warning: "+reason+"; using TCG: timings measure emulation, not hardware") {
			t.Errorf("%s: no fallback warning %q:\n%s", kvm, reason, r.stderr)
		}
		facts(r, "vm.accel: tcg ("+reason+"; TCG measures emulation, not hardware), -cpu max")
		first := r.stderr.String()
		r.stdout, r.stderr = &syncBuffer{}, &syncBuffer{}
		r.env.stdout, r.env.stderr = r.stdout, r.stderr
		r.exits(exitStatus{Code: 3})
		// The cached verdict gives the same warning and fact: both are in
		// go test's output, which kbcompare compares.
		warning := func(s string) string {
			_, w, _ := strings.Cut(s, "vmexec: warning: ")
			w, _, _ = strings.Cut(w, "\n")
			return w
		}
		if log, _ := os.ReadFile(r.cfg.console); warning(r.stderr.String()) != warning(first) || !strings.Contains(string(log), "=== vmexec: the accelerator choice cached in ") {
			t.Errorf("%s: the second run did not use the cached verdict, or warned otherwise:\n%s\nthen\n%s\nits log:\n%s", kvm, first, r.stderr, log)
		}
		facts(r, "vm.accel: tcg ("+reason+"; TCG measures emulation, not hardware), -cpu max")
	}

	// A kernel that prints its first line in time may take longer than
	// -kvm-probe to reach init: it stays on KVM.
	r = newFakeRun(t, "ok", auto)
	r.withKVM("slow")
	r.exits(exitStatus{Code: 3})
	facts(r, "vm.accel: kvm (-accel auto), -cpu host")
	if strings.Contains(r.stderr.String(), "warning") {
		t.Errorf("a slow KVM boot fell back:\n%s", r.stderr)
	}

	// No KVM device: TCG without a probe.
	r = newFakeRun(t, "ok", auto)
	r.exits(exitStatus{Code: 3})
	if !strings.Contains(r.stderr.String(), "vmexec: warning: open "+r.env.kvmDevice+": no such file or directory; using TCG") {
		t.Errorf("no warning of the missing KVM device:\n%s", r.stderr)
	}
	// -accel kvm: no probe, no fallback.
	r = newFakeRun(t, "ok", []string{"-accel", "kvm"})
	r.withKVM("ok")
	r.exits(exitStatus{Code: 3})
	facts(r, "vm.accel: kvm (-accel kvm), -cpu host")
}

func TestBootCannotStart(t *testing.T) {
	r := newFakeRun(t, "ok", nil)
	h := &host{cfg: r.cfg, runEnv: r.env, tmp: r.dir, qemu: filepath.Join(r.dir, "no-qemu"), log: io.Discard}
	if res := h.boot("tcg", "vm.accel: tcg", false); res.err == nil || !strings.Contains(res.err.Error(), "starting "+h.qemu) {
		t.Errorf("no QEMU: %+v", res)
	}
	// The start frame cannot be sent: the boot fails, and ends QEMU.
	data, qemuEnd, err := socketPair()
	if err != nil {
		t.Fatal(err)
	}
	qemuEnd.Close()
	b := &boot{h: h, accel: "tcg", cmd: exec.Command("sleep", "60"), con: newConsole(), frames: make(chan frame, 1),
		exited: make(chan struct{}), data: data}
	h.cfg.pin = "off"
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { b.waitErr = b.cmd.Wait(); close(b.exited) }()
	b.frames <- frame{typ: frameHello}
	if res := b.wait(); res.err == nil || !strings.Contains(res.err.Error(), "sending the start frame: ") || !strings.Contains(res.err.Error(), "broken pipe") {
		t.Errorf("start frame unsent: %+v", res)
	}
	select {
	case <-b.exited:
	default:
		t.Error("QEMU (sleep) still runs after the failed boot")
	}
}

// fakeArgsFor is vmexec's command line for the fake QEMU, for the command
// tests.
func fakeArgsFor(t *testing.T, extra ...string) (img string, args []string) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	img = fakeImage(t, dir, 4096)
	args = append([]string{"-kernel", img, "-qemu", self, "-accel", "tcg", "-pvh", "off", "-pin", "off",
		"-console", filepath.Join(dir, "console.log")}, extra...)
	return img, append(args, "/bin/true", "-test.run=^$")
}

// The command as go test runs it, with the fake as its QEMU: its output,
// exit status and signals are the binary's, and its own signals end it.
func TestFakeQEMUCommand(t *testing.T) {
	needVMExec(t)
	cache := "XDG_CACHE_HOME=" + t.TempDir()
	img, args := fakeArgsFor(t)
	r := vmexec(t, []string{fakeQEMUEnv + "=ok", cache}, args...)
	if want := "out: first\nout: \x00\r\n\xffbinary\nargs=[\"-test.run=^$\"]\n"; r.stdout != want || r.ws.ExitStatus() != 3 || !strings.Contains(r.stderr, "err: second\n") {
		t.Errorf("exit %d, stdout %q, stderr %q; want the binary's 3 and output", r.ws.ExitStatus(), r.stdout, r.stderr)
	}
	noQEMULeft(t, img)

	img, args = fakeArgsFor(t)
	if r := vmexec(t, []string{fakeQEMUEnv + "=exit-signal", cache}, args...); !r.ws.Signaled() || r.ws.Signal() != syscall.SIGKILL || r.stdout != "dying\n" {
		t.Errorf("vmexec ended %v, stdout %q, want killed by SIGKILL as the binary was\n%s", r.ws, r.stdout, r.stderr)
	}
	noQEMULeft(t, img)

	// vmexec's own statuses (vmflags), each recorded by -outcome.
	outcomes := filepath.Join(t.TempDir(), "outcomes")
	for _, c := range []struct {
		guest  string
		flags  []string
		status int
		stderr string
	}{
		{"init-error", nil, vmflags.ExitFailed, "vmexec: the guest's init could not run /bin/true: mount devtmpfs on /dev"},
		{"no-init", []string{"-boot-timeout", "1s"}, vmflags.ExitDied, "vmexec: the kernel did not reach init within -boot-timeout=1s"},
		{"panic", nil, vmflags.ExitDied, "vmexec: guest kernel panic: "},
		{"qemu-error", nil, vmflags.ExitQEMU, "vmexec: QEMU ended (exit status 1) before the kernel printed a line"},
		{"ok", nil, 3, "err: second"},
	} {
		img, args := fakeArgsFor(t, append([]string{"-outcome", outcomes}, c.flags...)...)
		r := vmexec(t, []string{fakeQEMUEnv + "=" + c.guest, cache}, args...)
		if r.ws.ExitStatus() != c.status || !strings.HasPrefix(r.stderr, c.stderr) && !strings.Contains(r.stderr, "\n"+c.stderr) {
			t.Errorf("%s: exit %d, stderr %q; want %d and %q", c.guest, r.ws.ExitStatus(), r.stderr, c.status, c.stderr)
		}
		noQEMULeft(t, img)
	}
	got, err := vmflags.ReadOutcomeFile(outcomes)
	if err != nil || len(got) != 5 {
		t.Fatalf("-outcome: %d lines, %v; want 5", len(got), err)
	}
	for i, want := range []string{"failed", "died", "died", "qemu", "exited"} {
		wd, _ := os.Getwd()
		if o := got[i]; o.Outcome != want || o.Program != "/bin/true" || o.Dir != wd || o.Lost() != (want == "died" || want == "froze") || want != "exited" && o.Why == "" || strings.Contains(o.Why, "\n") {
			t.Errorf("outcome %d: %+v, want %s", i, o, want)
		}
	}

	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		img, args := fakeArgsFor(t)
		ws, stderr := signalWhenReady(t, []string{fakeQEMUEnv + "=hang", cache}, sig, args...)
		if !ws.Signaled() || ws.Signal() != sig || !strings.Contains(stderr, "vmexec: interrupted by "+sig.String()+"; the guest was killed") {
			t.Errorf("after %v vmexec ended %v: %s", sig, ws, stderr)
		}
		noQEMULeft(t, img)
	}
}
