//go:build linux

package main

import (
	"bufio"
	"cmp"
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
	"github.com/u-root/u-root/pkg/cpio"
	"golang.org/x/sys/unix"
)

// host is one vmexec run: its config, its surroundings, and what it
// prepares once for all its boots.
type host struct {
	cfg *config
	runEnv
	qemu       string   // QEMU's path
	tmp        string   // the run's scratch directory
	cache      string   // what vmexec learns of an image across runs (its PVH vmlinux, -accel auto's choice); else tmp
	initrd     string   // the guest's root
	real       string   // -kernel with its links followed: its config, modules and System.map lie beside it
	digest     string   // the image's SHA-256 (vmflags.ImageDigest)
	kernel     string   // the host's kernel release and version
	image      string   // what QEMU boots: -kernel, or its vmlinux (PVH)
	accelCache string   // -accel auto's verdict (chooseAccel)
	outputs    []string // what the binary writes for the user, sent back
	log        io.Writer
	logPath    string // the console log
	keepLog    bool   // a boot failed: keep the log and name it
}

// runEnv is what a run uses besides its flags; main gives the process's
// own, tests their fakes.
type runEnv struct {
	stdout, stderr io.Writer
	signals        <-chan os.Signal
	kvmDevice      string // what -accel auto opens
	grace          graces
}

// run boots the guest and returns how the binary ended, or the signal
// that interrupted vmexec.
func run(cfg *config, env runEnv) (*exitStatus, syscall.Signal, error) {
	err := checkImage(cfg.kernel)
	if err != nil {
		return nil, 0, err
	}
	h := &host{cfg: cfg, runEnv: env, image: cfg.kernel}
	var u unix.Utsname
	unix.Uname(&u)
	h.kernel = unix.ByteSliceToString(u.Release[:]) + " " + unix.ByteSliceToString(u.Version[:])
	h.real, err = filepath.EvalSymlinks(cfg.kernel)
	if err == nil {
		h.digest, err = vmflags.ImageDigest(h.real)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("-kernel: %v", err)
	}
	if h.qemu, err = exec.LookPath(cfg.qemu); err != nil {
		return nil, 0, &failure{vmflags.ExitQEMU, fmt.Errorf("%s not found in PATH: install QEMU (Debian and Ubuntu: apt-get install qemu-system-x86; Fedora: dnf install qemu-system-x86)", cfg.qemu)}
	}
	if h.tmp, err = os.MkdirTemp("", "vmexec-"); err != nil {
		return nil, 0, err
	}
	defer os.RemoveAll(h.tmp)
	h.initrd, h.cache = filepath.Join(h.tmp, "initramfs.cpio"), h.tmp
	if c, err := os.UserCacheDir(); err == nil {
		h.cache = filepath.Join(c, "kbench", "vmexec")
	}

	var logFile *os.File
	if cfg.console == "" {
		logFile, err = os.CreateTemp("", "vmexec-console-*.log")
	} else {
		logFile, err = os.Create(cfg.console)
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

	facts, err := h.facts()
	if err != nil {
		return nil, 0, err
	}
	entry := "the bzImage's (-pvh off)"
	if cfg.pvh == "auto" {
		if p, err := pvhKernel(h.real, h.digest, h.cache); err == nil {
			h.image, entry = p, "PVH, of the vmlinux inside the image"
		} else {
			entry = "the bzImage's (no PVH vmlinux: " + err.Error() + ")"
		}
	}
	if err := h.makeInitramfs(append(facts, "vm.entry: "+entry)); err != nil {
		return nil, 0, err
	}

	accel, fact, probe := h.chooseAccel()
	res := h.boot(accel, fact, probe)
	if res.probeFailed {
		reason := fmt.Sprintf("KVM did not boot this kernel (%v)", res.err)
		h.cacheAccel("tcg: " + reason)
		fmt.Fprintf(h.log, "=== vmexec: %s; booting again under TCG\n", reason)
		res = h.boot(h.tcg(reason))
	} else if probe && res.err == nil && res.signal == 0 {
		h.cacheAccel("kvm")
	}
	if res.signal != 0 {
		fmt.Fprintf(h.stderr, "vmexec: interrupted by %v; the guest was killed\n", res.signal)
		return nil, res.signal, nil
	}
	return res.status, 0, res.err
}

// tcg is a boot under TCG that -accel auto chose for reason, warned of.
func (h *host) tcg(reason string) (accel, fact string, probe bool) {
	fmt.Fprintf(h.stderr, "vmexec: warning: %s; using TCG: timings measure emulation, not hardware\n", reason)
	return "tcg", "vm.accel: tcg (" + reason + "; TCG measures emulation, not hardware), -cpu max", false
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
	f, err := os.OpenFile(h.kvmDevice, os.O_RDWR, 0)
	if err != nil {
		return h.tcg(err.Error())
	}
	f.Close()
	// -accel auto remembers whether KVM boots an image on this host ("kvm"
	// or "tcg: REASON"), keyed by the image's hash, the host's kernel and
	// QEMU (in the run's scratch directory where there is no cache).
	sum := sha256.Sum256(fmt.Appendf(nil, "%s\x00%s\x00%s", h.digest, h.kernel, h.qemu))
	h.accelCache = filepath.Join(h.cache, "accel-"+hex.EncodeToString(sum[:12]))
	b, _ := os.ReadFile(h.accelCache)
	v := strings.TrimSpace(string(b))
	if reason, ok := strings.CutPrefix(v, "tcg: "); ok {
		// The probing run's fact and warning, so that runs compare.
		fmt.Fprintf(h.log, "=== vmexec: the accelerator choice cached in %s: %s\n", h.accelCache, v)
		return h.tcg(reason)
	}
	return "kvm", "vm.accel: kvm (-accel auto), -cpu host", v != "kvm"
}

// cacheAccel remembers -accel auto's choice; a cache that cannot be
// written costs only the next run a probe.
func (h *host) cacheAccel(v string) {
	if os.MkdirAll(filepath.Dir(h.accelCache), 0o755) == nil {
		os.WriteFile(h.accelCache, []byte(v+"\n"), 0o644)
	}
}

// facts are the fingerprint lines only the host knows before boot.
func (h *host) facts() ([]string, error) {
	out, err := exec.Command(h.qemu, "--version").Output()
	if err != nil {
		return nil, &failure{vmflags.ExitQEMU, fmt.Errorf("%s --version: %v", h.qemu, err)}
	}
	version, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	cpu := "(missing)"
	if info, err := procfs.Host.CPUInfo(); err != nil {
		cpu = "(unreadable: " + err.Error() + ")"
	} else if models := info.Values("model name"); len(models) > 0 {
		cpu = models[0]
	}
	return []string{
		"vm.engine: " + version + " (" + h.qemu + ")",
		fmt.Sprintf("vm.vcpus: %d", h.cfg.smp),
		"vm.memory: " + h.cfg.memory,
		"vm.image: " + h.cfg.kernel + " (sha256 " + h.digest[:16] + ")",
		"vm.append: " + cmp.Or(h.cfg.append, "(none)"),
		"vm.host.kernel: " + h.kernel,
		"vm.host.cpu: " + cpu,
	}, nil
}

// specPath is where vmexec leaves the guest's init its instructions.
const specPath = "/etc/kbench/vmexec.json"

// guestSpec is what the init needs to run the binary as the host would.
type guestSpec struct {
	Path      string   `json:"path"` // the test binary, at its host path
	Args      []string `json:"args"` // argv, Args[0] included
	Env       []string `json:"env"`
	Dir       string   `json:"dir"` // go test's package directory
	UID       int      `json:"uid"`
	GID       int      `json:"gid"`
	Groups    []int    `json:"groups"`
	Rlimits   []rlimit `json:"rlimits"`
	Modules   []string `json:"modules"`    // to load, in order, at their host paths
	OneStream bool     `json:"one_stream"` // the host's stdout and stderr are one file: one pipe keeps their order
	Outputs   []string `json:"outputs"`    // what the binary writes for the user, sent back after it ends
}

type rlimit struct {
	Resource int `json:"resource"`
	Cur, Max uint64
}

// guestTools are host programs the suite and its tests start, copied in
// when present (docs/vms.md, "What the guest holds").
var guestTools = []string{"redis-server", "redis-benchmark", "ip", "sh", "awk", "sleep", "cat", "true", "false"}

// passEnv says which of vmexec's environment variables the binary gets.
func passEnv(kv string) bool {
	k, _, _ := strings.Cut(kv, "=")
	return strings.HasPrefix(k, "KBENCH_") || strings.HasPrefix(k, "GO") || k == "PATH" || k == "HOME"
}

// rlimitNames are Linux's resource limits, by number (RLIM_NLIMITS of them).
var rlimitNames = strings.Fields("CPU FSIZE DATA STACK CORE RSS NPROC NOFILE MEMLOCK AS LOCKS SIGPENDING MSGQUEUE NICE RTPRIO RTTIME")

// sameFile says whether two writers are one: the same value, or two
// files open on the same file.
func sameFile(a, b io.Writer) bool {
	af, okA := a.(*os.File)
	bf, okB := b.(*os.File)
	if a == b || !okA || !okB {
		return a == b
	}
	fa, errA := af.Stat()
	fb, errB := bf.Stat()
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

// makeInitramfs writes the guest's root, with the spec that runs the
// binary as vmexec would have.
func (h *host) makeInitramfs(facts []string) error {
	bin, err := exec.LookPath(h.cfg.args[0])
	if err == nil {
		bin, err = filepath.Abs(bin)
	}
	self, err2 := os.Executable()
	cwd, err3 := os.Getwd()
	groups, err4 := os.Getgroups()
	if err = cmp.Or(err, err2, err3, err4); err != nil {
		return err
	}
	spec := &guestSpec{Path: bin, Args: append([]string{bin}, h.cfg.args[1:]...), Dir: cwd, UID: os.Getuid(), GID: os.Getgid(),
		Groups: groups, OneStream: sameFile(h.stdout, h.stderr), Outputs: outputs(cwd, h.cfg.args[1:], os.Getenv)}
	for _, kv := range os.Environ() {
		if passEnv(kv) {
			spec.Env = append(spec.Env, kv)
		}
	}
	for res := range rlimitNames {
		var lim unix.Rlimit
		if unix.Getrlimit(res, &lim) == nil {
			spec.Rlimits = append(spec.Rlimits, rlimit{res, lim.Cur, lim.Max})
		}
	}
	h.outputs = spec.Outputs
	ir := newInitramfs()
	ir.executable(self, "/init")
	ir.executable(bin, bin)
	if root := treeRoot(spec.Dir); root != "" {
		ir.tree(root)
	}
	for _, t := range append(guestTools, os.Getenv("KBENCH_REDIS_SERVER")) {
		if p, err := exec.LookPath(t); t != "" && err == nil {
			if p, err = filepath.Abs(p); ir.fail(err) {
				ir.executable(p, p)
			}
		}
		// Scripts name /bin/sh, which usrmerge makes a link to /usr/bin.
		if t != "" && !strings.Contains(t, "/") && exists("/bin/"+t) {
			ir.executable("/bin/"+t, "/bin/"+t)
		}
	}
	if dir := modulesFor(h.real); dir != "" && len(h.cfg.modules) > 0 {
		if spec.Modules, err = findModules(dir, h.cfg.modules); err != nil {
			return fmt.Errorf("-modules: %w", err)
		}
		for _, m := range spec.Modules {
			ir.file(m, m)
		}
	} else if len(h.cfg.modules) > 0 {
		facts = append(facts, "vm.modules: none loaded (no lib/modules/RELEASE beside "+h.cfg.kernel+")")
	}
	for _, d := range []string{"/proc", "/sys", "/dev", "/root"} {
		if !ir.has(d) {
			ir.dir(d, 0o755, 0, 0)
		}
	}
	ir.dir("/tmp", 0o1777, 0, 0)
	ir.dir("/run", 0o1777, 0, 0)
	ir.add(cpio.CharDev("/dev/console", 0o600, 5, 1))
	// The binary may create these, which as an unprivileged user it could
	// not below the initramfs's root-owned directories.
	for _, p := range []string{os.Getenv("KBENCH_PROFILE"), os.Getenv("GOCOVERDIR"), os.Getenv("HOME")} {
		if p != "" && !ir.has(under(spec.Dir, p)) {
			ir.dir(under(spec.Dir, p), 0o755, spec.UID, spec.GID)
		}
	}
	ir.add(cpio.StaticFile("/etc/passwd", fmt.Sprintf("root:x:0:0:root:/root:/bin/sh\nu%d:x:%d:%d::%s:/bin/sh\n", spec.UID, spec.UID, spec.GID, os.Getenv("HOME")), 0o644))
	ir.add(cpio.StaticFile("/etc/group", fmt.Sprintf("root:x:0:\ng%d:x:%d:\n", spec.GID, spec.GID), 0o644))
	ir.add(cpio.StaticFile("/etc/hosts", "127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n", 0o644))
	facts = append(facts, fmt.Sprintf("vm.user: uid %d gid %d (vmexec's)", spec.UID, spec.GID))
	ir.add(cpio.StaticFile("/"+fingerprint.VMFile, strings.Join(facts, "\n")+"\n", 0o644))
	specJSON, err := json.Marshal(spec)
	ir.add(cpio.StaticFile(specPath, string(specJSON), 0o644))
	if ir.fail(err); ir.err != nil {
		return ir.err
	}
	f, err := os.Create(h.initrd)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	if err = cmp.Or(ir.write(w), w.Flush(), f.Close()); err != nil {
		return err
	}
	fmt.Fprintf(h.log, "=== vmexec: initramfs %s: %d entries, %.1f MiB, %s\n", h.initrd, len(ir.recs), float64(ir.size)/(1<<20), time.Now().Format(time.RFC3339))
	return nil
}

// profileFlags are the test binary's flags naming a file it writes.
var profileFlags = []string{"cpuprofile", "memprofile", "blockprofile", "mutexprofile", "trace", "coverprofile"}

// outputs lists what the binary writes for the user, as absolute paths:
// go test's profile files (relative ones are in -test.outputdir, else the
// working directory), the KBENCH_PROFILE directory and GOCOVERDIR.
func outputs(cwd string, args []string, getenv func(string) string) []string {
	vals := map[string]string{}
	for _, s := range args {
		if a := testflags.Parse(s); a.Flag && a.HasValue {
			vals[a.Name] = a.Value
		}
	}
	var outs []string
	for _, f := range profileFlags {
		if v := vals[f]; v != "" {
			outs = append(outs, under(under(cwd, vals["outputdir"]), v))
		}
	}
	for _, env := range []string{"KBENCH_PROFILE", "GOCOVERDIR"} {
		if v := getenv(env); v != "" {
			outs = append(outs, under(cwd, v))
		}
	}
	return outs
}

// under is path p, relative to dir when it is not absolute.
func under(dir, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(dir, p)
}
