//go:build linux

package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/kbench/kbench/internal/fingerprint"
	"github.com/kbench/kbench/internal/procfs"
	"github.com/kbench/kbench/internal/testflags"
	"github.com/kbench/kbench/internal/vmflags"
	"golang.org/x/sys/unix"
)

// host is one vmexec run: its config, its surroundings, and what it
// prepares once for all its boots.
type host struct {
	cfg *config
	runEnv
	qemu    string   // QEMU's path
	tmp     string   // the run's scratch directory
	initrd  string   // the guest's root
	image   string   // what QEMU boots: -kernel, or its vmlinux (PVH)
	outputs []string // what the binary writes for the user, sent back
	log     io.Writer
	logPath string // the console log
	keepLog bool   // a boot failed: keep the log and name it
}

// runEnv is what a run uses besides its flags: where the binary's output
// and vmexec's messages go, the signals vmexec gets, the device -accel
// auto opens, the boot loop's graces. main gives the process's own.
type runEnv struct {
	stdout, stderr io.Writer
	signals        <-chan os.Signal
	kvmDevice      string
	grace          graces
}

// run boots the guest and returns how the binary ended, or the signal
// that interrupted vmexec.
func run(cfg *config, env runEnv) (*exitStatus, syscall.Signal, error) {
	if err := checkImage(cfg.kernel); err != nil {
		return nil, 0, err
	}
	// A link such as /vmlinuz names the image; its config and modules
	// sit beside the file it points to.
	real, err := filepath.EvalSymlinks(cfg.kernel)
	if err != nil {
		return nil, 0, fmt.Errorf("-kernel: %v", err)
	}
	if c := configFor(real); c != "" {
		wanted, err := checkConfig(c)
		if err != nil {
			return nil, 0, err
		}
		if len(wanted) > 0 {
			fmt.Fprintf(env.stderr, "vmexec: note: %s lacks %s; rows that need them skip\n", c, strings.Join(wanted, ", "))
		}
	}
	qemu, err := exec.LookPath(cfg.qemu)
	if err != nil {
		return nil, 0, failWith(vmflags.ExitQEMU, fmt.Errorf("%s not found in PATH: install QEMU (Debian and Ubuntu: apt-get install qemu-system-x86; Fedora: dnf install qemu-system-x86)", cfg.qemu))
	}
	tmp, err := os.MkdirTemp("", "vmexec-")
	if err != nil {
		return nil, 0, err
	}
	defer os.RemoveAll(tmp)
	h := &host{cfg: cfg, runEnv: env, qemu: qemu, tmp: tmp, initrd: filepath.Join(tmp, "initramfs.cpio")}

	logPath := cfg.console
	var logFile *os.File
	if logPath == "" {
		logFile, err = os.CreateTemp("", "vmexec-console-*.log")
	} else {
		logFile, err = os.Create(logPath)
	}
	if err != nil {
		return nil, 0, err
	}
	h.log, h.logPath = logFile, logFile.Name()
	defer func() {
		logFile.Close()
		if !h.keepLog && cfg.console == "" {
			os.Remove(h.logPath)
		}
	}()

	facts, err := hostFacts(cfg, qemu)
	if err != nil {
		return nil, 0, err
	}
	h.image = cfg.kernel
	entry := "the bzImage's (-pvh off)"
	if cfg.pvh == "auto" {
		dir := tmp
		if c, err := os.UserCacheDir(); err == nil {
			dir = filepath.Join(c, "kbench", "vmexec")
		}
		if p, err := pvhKernel(real, dir); err == nil {
			h.image = p
			entry = "PVH, of the vmlinux inside the image"
			fmt.Fprintf(h.log, "=== vmexec: booting %s, the vmlinux of %s, through its PVH entry\n", p, cfg.kernel)
		} else {
			entry = "the bzImage's (no PVH vmlinux: " + err.Error() + ")"
		}
	}
	facts = append(facts, "vm.entry: "+entry)
	if err := h.makeInitramfs(facts); err != nil {
		return nil, 0, err
	}

	accel, fact, probe := h.chooseAccel()
	res := h.boot(accel, fact, probe)
	if res.probeFailed {
		reason := fmt.Sprintf("KVM did not boot this kernel (%v)", res.err)
		h.cacheAccel("tcg: " + reason)
		fmt.Fprintf(h.log, "=== vmexec: %s; booting again under TCG\n", reason)
		fmt.Fprintf(h.stderr, "vmexec: warning: %s; using TCG: timings measure emulation, not hardware\n", reason)
		res = h.boot("tcg", tcgFact(reason), false)
	} else if probe && res.err == nil && res.signal == 0 {
		h.cacheAccel("kvm")
	}
	if res.signal != 0 {
		fmt.Fprintf(h.stderr, "vmexec: %v\n", res.err)
		return nil, res.signal, nil
	}
	return res.status, 0, res.err
}

func tcgFact(reason string) string {
	return "vm.accel: tcg (" + reason + "; TCG measures emulation, not hardware), -cpu max"
}

// chooseAccel decides the accelerator: probe says the first boot is a
// KVM probe that may fall back to TCG.
func (h *host) chooseAccel() (accel, fact string, probe bool) {
	switch h.cfg.accel {
	case "kvm":
		return "kvm", "vm.accel: kvm (-accel kvm), -cpu host", false
	case "tcg":
		return "tcg", "vm.accel: tcg (-accel tcg; TCG measures emulation, not hardware), -cpu max", false
	}
	if f, err := os.OpenFile(h.kvmDevice, os.O_RDWR, 0); err != nil {
		reason := err.Error()
		fmt.Fprintf(h.stderr, "vmexec: warning: %s; using TCG: timings measure emulation, not hardware\n", reason)
		return "tcg", tcgFact(reason), false
	} else {
		f.Close()
	}
	switch v := h.cachedAccel(); {
	case v == "kvm":
		return "kvm", "vm.accel: kvm (-accel auto), -cpu host", false
	case strings.HasPrefix(v, "tcg: "):
		// The same fact and warning as the probing run's, so that runs
		// compare (the warning lands in go test's output); the log says
		// where the choice came from.
		reason := strings.TrimPrefix(v, "tcg: ")
		fmt.Fprintf(h.log, "=== vmexec: the accelerator choice cached in %s: %s\n", h.accelCachePath(), v)
		fmt.Fprintf(h.stderr, "vmexec: warning: %s; using TCG: timings measure emulation, not hardware\n", reason)
		return "tcg", tcgFact(reason), false
	}
	return "kvm", "vm.accel: kvm (-accel auto), -cpu host", true
}

// accelCachePath is where -accel auto remembers whether KVM boots an image
// on this host: keyed by the image's hash, the host's kernel and QEMU.
func (h *host) accelCachePath() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	image, _ := vmflags.ImageDigest(h.cfg.kernel) // none: a boot that reports why
	sum := sha256.New()
	io.WriteString(sum, image)
	var u unix.Utsname
	unix.Uname(&u)
	fmt.Fprintf(sum, "\x00%s\x00%s\x00%s", unix.ByteSliceToString(u.Release[:]), unix.ByteSliceToString(u.Version[:]), h.qemu)
	return filepath.Join(dir, "kbench", "vmexec", "accel-"+hex.EncodeToString(sum.Sum(nil))[:24])
}

// cachedAccel is -accel auto's remembered choice for this image, host
// and QEMU: "kvm", "tcg: REASON", or "" for none (probe KVM).
func (h *host) cachedAccel() string {
	p := h.accelCachePath()
	if p == "" {
		return ""
	}
	b, _ := os.ReadFile(p)
	return strings.TrimSpace(string(b))
}

// cacheAccel remembers -accel auto's choice (cachedAccel's forms); a
// cache that cannot be written costs only the next run a probe.
func (h *host) cacheAccel(v string) {
	if p := h.accelCachePath(); p != "" && os.MkdirAll(filepath.Dir(p), 0o755) == nil {
		os.WriteFile(p, []byte(v+"\n"), 0o644)
	}
}

// hostFacts are the fingerprint lines only the host knows before boot.
func hostFacts(cfg *config, qemu string) ([]string, error) {
	out, err := exec.Command(qemu, "--version").Output()
	if err != nil {
		return nil, failWith(vmflags.ExitQEMU, fmt.Errorf("%s --version: %v", qemu, err))
	}
	version := strings.SplitN(strings.TrimSpace(string(out)), "\n", 2)[0]
	var u unix.Utsname
	unix.Uname(&u)
	image, err := vmflags.ImageDigest(cfg.kernel)
	if err != nil {
		return nil, err
	}
	appendLine := cfg.append
	if appendLine == "" {
		appendLine = "(none)"
	}
	return []string{
		"vm.engine: " + version + " (" + qemu + ")",
		fmt.Sprintf("vm.vcpus: %d", cfg.smp),
		"vm.memory: " + cfg.memory,
		"vm.image: " + cfg.kernel + " (sha256 " + image[:16] + ")",
		"vm.append: " + appendLine,
		"vm.host.kernel: " + unix.ByteSliceToString(u.Release[:]) + " " + unix.ByteSliceToString(u.Version[:]),
		"vm.host.cpu: " + hostCPU(),
	}, nil
}

func hostCPU() string {
	info, err := procfs.Host.CPUInfo()
	if err != nil {
		return "(unreadable: " + err.Error() + ")"
	}
	if models := info.Values("model name"); len(models) > 0 {
		return models[0]
	}
	return "(missing)"
}

// guestTools are host programs the suite and its tests start, copied in
// when present: the servers, iproute2's ip (netbench's namespaces), and
// the shell and tools of the tests' scripts (#!/bin/sh, awk, sleep).
var guestTools = []string{"redis-server", "redis-benchmark", "ip", "sh", "awk", "sleep", "cat", "true", "false"}

// passEnv says which of vmexec's environment variables the binary gets.
func passEnv(kv string) bool {
	k, _, _ := strings.Cut(kv, "=")
	return strings.HasPrefix(k, "KBENCH_") || strings.HasPrefix(k, "GO") || k == "PATH" || k == "HOME"
}

var rlimitNames = []struct {
	res  int
	name string
}{
	{unix.RLIMIT_NOFILE, "RLIMIT_NOFILE"}, {unix.RLIMIT_NPROC, "RLIMIT_NPROC"},
	{unix.RLIMIT_STACK, "RLIMIT_STACK"}, {unix.RLIMIT_MEMLOCK, "RLIMIT_MEMLOCK"},
	{unix.RLIMIT_CORE, "RLIMIT_CORE"}, {unix.RLIMIT_AS, "RLIMIT_AS"},
	{unix.RLIMIT_DATA, "RLIMIT_DATA"}, {unix.RLIMIT_FSIZE, "RLIMIT_FSIZE"},
	{unix.RLIMIT_MSGQUEUE, "RLIMIT_MSGQUEUE"}, {unix.RLIMIT_NICE, "RLIMIT_NICE"},
	{unix.RLIMIT_RTPRIO, "RLIMIT_RTPRIO"}, {unix.RLIMIT_SIGPENDING, "RLIMIT_SIGPENDING"},
	{unix.RLIMIT_LOCKS, "RLIMIT_LOCKS"}, {unix.RLIMIT_CPU, "RLIMIT_CPU"},
	{unix.RLIMIT_RTTIME, "RLIMIT_RTTIME"},
}

// makeSpec says how the guest runs the binary: as vmexec would have.
func (h *host) makeSpec(bin string) (*guestSpec, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	spec := &guestSpec{Path: bin, Args: append([]string{bin}, h.cfg.args[1:]...), Dir: cwd,
		UID: os.Getuid(), GID: os.Getgid(), OneStream: sameFile(h.stdout, h.stderr)}
	if spec.UID != 0 {
		if spec.Groups, err = os.Getgroups(); err != nil {
			return nil, err
		}
	}
	for _, kv := range os.Environ() {
		if passEnv(kv) {
			spec.Env = append(spec.Env, kv)
		}
	}
	spec.Outputs = outputs(cwd, spec.Args[1:], os.Getenv)
	for _, r := range rlimitNames {
		var lim unix.Rlimit
		if err := unix.Getrlimit(r.res, &lim); err == nil {
			spec.Rlimits = append(spec.Rlimits, rlimit{r.res, r.name, lim.Cur, lim.Max})
		}
	}
	return spec, nil
}

// sameFile says whether two writers are one: the same value, or two
// files open on the same file.
func sameFile(a, b io.Writer) bool {
	if a == b {
		return true
	}
	af, okA := a.(*os.File)
	bf, okB := b.(*os.File)
	if !okA || !okB {
		return false
	}
	fa, errA := af.Stat()
	fb, errB := bf.Stat()
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

// makeInitramfs writes the guest's root.
func (h *host) makeInitramfs(facts []string) error {
	bin, err := exec.LookPath(h.cfg.args[0])
	if err != nil {
		return err
	}
	if bin, err = filepath.Abs(bin); err != nil {
		return err
	}
	spec, err := h.makeSpec(bin)
	if err != nil {
		return err
	}
	h.outputs = spec.Outputs
	ir := newInitramfs()
	defer ir.close()
	self, err := os.Executable()
	if err != nil {
		return err
	}
	if err := ir.file(self, "/init"); err != nil {
		return err
	}
	libs, err := sharedLibs(self)
	if err != nil {
		return err
	}
	for _, l := range libs {
		if err := ir.file(l, l); err != nil {
			return err
		}
	}
	if err := ir.executable(bin); err != nil {
		return err
	}
	if root := treeRoot(spec.Dir); root != "" {
		if err := ir.tree(root); err != nil {
			return err
		}
	}
	tools := guestTools
	if s := os.Getenv("KBENCH_REDIS_SERVER"); s != "" {
		tools = append(tools, s)
	}
	for _, t := range tools {
		paths := []string{}
		if p, err := exec.LookPath(t); err == nil {
			if p, err = filepath.Abs(p); err == nil {
				paths = append(paths, p)
			}
		}
		// Scripts name /bin/sh, which usrmerge makes a link to /usr/bin.
		if !strings.Contains(t, "/") && exists("/bin/"+t) {
			paths = append(paths, "/bin/"+t)
		}
		for _, p := range paths {
			if err := ir.executable(p); err != nil {
				return fmt.Errorf("copying %s into the guest: %w", p, err)
			}
		}
	}
	real, _ := filepath.EvalSymlinks(h.cfg.kernel)
	if dir, release := modulesFor(real); dir != "" && len(h.cfg.modules) > 0 {
		mods, err := findModules(dir, h.cfg.modules)
		if err != nil {
			return fmt.Errorf("-modules: %w", err)
		}
		for _, m := range mods {
			rel, _ := filepath.Rel(dir, m)
			guest := filepath.Join("/lib/modules", release, rel)
			if err := ir.file(m, guest); err != nil {
				return err
			}
			spec.Modules = append(spec.Modules, guest)
		}
	} else if len(h.cfg.modules) > 0 {
		facts = append(facts, "vm.modules: none loaded (no lib/modules/RELEASE beside "+h.cfg.kernel+")")
	}
	for _, d := range []string{"/proc", "/sys", "/dev", "/tmp", "/run", "/root"} {
		if !ir.has(d) {
			ir.dir(d, 0o755, 0, 0)
		}
	}
	ir.add(charDev("/dev/console", 0o600, 5, 1))
	for _, env := range []string{"KBENCH_PROFILE", "GOCOVERDIR"} {
		// The binary may create these; as an unprivileged user it could
		// not below the initramfs's root-owned directories.
		if v := os.Getenv(env); v != "" {
			p := v
			if !filepath.IsAbs(p) {
				p = filepath.Join(spec.Dir, v)
			}
			if p = filepath.Clean(p); !ir.has(p) {
				ir.dir(p, 0o755, spec.UID, spec.GID)
			}
		}
	}
	if home := os.Getenv("HOME"); home != "" && !ir.has(home) {
		ir.dir(home, 0o755, spec.UID, spec.GID)
	}
	user := fmt.Sprintf("u%d", spec.UID)
	ir.static("/etc/passwd", fmt.Sprintf("root:x:0:0:root:/root:/bin/sh\n%s:x:%d:%d::%s:/bin/sh\n", user, spec.UID, spec.GID, os.Getenv("HOME")), 0o644)
	ir.static("/etc/group", fmt.Sprintf("root:x:0:\ng%d:x:%d:\n", spec.GID, spec.GID), 0o644)
	ir.static("/etc/hosts", "127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n", 0o644)
	user = fmt.Sprintf("vm.user: uid %d gid %d (vmexec's)", spec.UID, spec.GID)
	ir.static("/"+fingerprint.VMFile, strings.Join(append(facts, user), "\n")+"\n", 0o644)
	specJSON, err := json.Marshal(spec)
	if err != nil {
		return err
	}
	ir.static(specPath, string(specJSON), 0o644)

	f, err := os.Create(h.initrd)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	if err := ir.write(w); err != nil {
		f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	fmt.Fprintf(h.log, "=== vmexec: initramfs %s: %d entries, %.1f MiB, %s\n", h.initrd, len(ir.recs), float64(ir.size)/(1<<20), time.Now().Format(time.RFC3339))
	return f.Close()
}

// profileFlags are the test binary's flags naming a file it writes.
var profileFlags = []string{"cpuprofile", "memprofile", "blockprofile", "mutexprofile", "trace", "coverprofile"}

// outputs lists what the binary writes for the user, as absolute paths:
// go test's profile files (relative ones are in -test.outputdir, else the
// working directory), the KBENCH_PROFILE directory and GOCOVERDIR.
func outputs(cwd string, args []string, getenv func(string) string) []string {
	var outs []string
	outdir := cwd
	vals := map[string]string{}
	for _, s := range args {
		a := testflags.Parse(s)
		if !a.Flag || !a.HasValue {
			continue
		}
		if a.Name == "outputdir" {
			outdir = a.Value
		}
		vals[a.Name] = a.Value
	}
	abs := func(base, p string) string {
		if filepath.IsAbs(p) {
			return filepath.Clean(p)
		}
		return filepath.Join(base, p)
	}
	for _, f := range profileFlags {
		if v := vals[f]; v != "" {
			outs = append(outs, abs(abs(cwd, outdir), v))
		}
	}
	for _, env := range []string{"KBENCH_PROFILE", "GOCOVERDIR"} {
		if v := getenv(env); v != "" {
			outs = append(outs, abs(cwd, v))
		}
	}
	return outs
}
