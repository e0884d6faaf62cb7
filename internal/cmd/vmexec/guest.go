//go:build linux

package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/kbench/kbench/internal/fingerprint"
	"github.com/u-root/u-root/pkg/termios"
	"golang.org/x/sys/unix"
)

// dataPort is the serial port the frames travel on; ttyS0 is the console.
const dataPort = "/dev/ttyS1"

// guestMain is the initramfs's /init (PID 1): it readies the guest, runs
// the test binary, sends its end and powers off. It never returns.
func guestMain() {
	fw, port, err := setupGuest()
	st := exitStatus{}
	if err != nil {
		// The kernel log, which the console shows: the one way out
		// before the data port is open.
		os.WriteFile("/dev/kmsg", []byte("vmexec-init: "+err.Error()+"\n"), 0)
		st.Err = err.Error()
	} else {
		go beat(fw) // stall.go: the host's progress guard
		st = runGuest(fw, port)
	}
	if fw != nil {
		payload, _ := json.Marshal(st)
		fw.write(frameExit, payload)
		unix.IoctlSetInt(int(fw.w.(*os.File).Fd()), unix.TCSBRK, 1) // tcdrain
	}
	unix.Sync()
	unix.Reboot(unix.LINUX_REBOOT_CMD_POWER_OFF)
	for {
		time.Sleep(time.Hour)
	}
}

// mount mounts a file system; option names the kernel option that
// provides it, for the error.
func mount(fstype, target, option string, flags uintptr, data string) error {
	if err := os.MkdirAll(target, 0o755); err != nil {
		return err
	}
	if err := unix.Mount(fstype, target, fstype, flags, data); err != nil && !errors.Is(err, unix.EBUSY) {
		return fmt.Errorf("mount %s on %s: %v (the kernel needs %s)", fstype, target, err, option)
	}
	return nil
}

// setupGuest mounts the file systems, opens the data port and says hello;
// then the optional parts (tmpfs, debugfs, tracefs, lo), each reported as
// a fact.
func setupGuest() (*frameWriter, io.Reader, error) {
	if err := cmp.Or(mount("proc", "/proc", "CONFIG_PROC_FS", 0, ""), mount("sysfs", "/sys", "CONFIG_SYSFS", 0, "")); err != nil {
		return nil, nil, err
	}
	devErr := mount("devtmpfs", "/dev", "CONFIG_DEVTMPFS", 0, "")
	if devErr != nil {
		// Make the nodes by hand to get the message out, then stop.
		unix.Mknod("/dev/kmsg", unix.S_IFCHR|0o600, int(unix.Mkdev(1, 11)))
		unix.Mknod(dataPort, unix.S_IFCHR|0o600, int(unix.Mkdev(4, 65)))
	}
	port, err := os.OpenFile(dataPort, os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("open %s: %v (the kernel needs CONFIG_SERIAL_8250 with at least 2 ports, 8250.nr_uarts>=2)", dataPort, err)
	}
	// Raw, so that frames pass 8-bit clean (the 8250's own defaults
	// ignore the modem lines: CLOCAL).
	t, err := termios.GetTermios(port.Fd())
	if err == nil {
		err = termios.SetTermios(port.Fd(), termios.MakeRaw(t))
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: raw mode: %v", dataPort, err)
	}
	fw := &frameWriter{w: port}
	if devErr != nil {
		return fw, nil, devErr
	}
	fw.write(frameHello, nil)

	fact := func(key, val string) { appendFacts([]string{"vm.guest." + key + ": " + val}) }
	// The root is a tmpfs already (the kernel's rootfs, given no root=),
	// /tmp and /run in it world-writable; /dev is devtmpfs.
	if err := mount("tmpfs", "/dev/shm", "CONFIG_TMPFS", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777"); err != nil {
		return fw, port, err
	}
	if err := mount("devpts", "/dev/pts", "CONFIG_UNIX98_PTYS", unix.MS_NOSUID|unix.MS_NOEXEC, "mode=0620,ptmxmode=0666"); err != nil {
		fact("devpts", err.Error())
	}
	mounts, missing := "proc sysfs devtmpfs tmpfs(/, /dev/shm)", ""
	for _, m := range [][3]string{{"debugfs", "/sys/kernel/debug", "CONFIG_DEBUG_FS"}, {"tracefs", "/sys/kernel/tracing", "CONFIG_TRACING"}} {
		if err := mount(m[0], m[1], m[2], 0, ""); err != nil {
			missing += "; " + err.Error()
		} else {
			mounts += " " + m[0]
		}
	}
	fact("mounts", mounts+missing)
	if err := linkUp("lo"); err != nil {
		fact("lo", "down: "+err.Error())
	}
	return fw, port, nil
}

// linkUp sets IFF_UP on an interface (SIOCSIFFLAGS).
func linkUp(name string) error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq(name)
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// loadModules loads each module file (finit_module), compressed ones
// through the kernel's own decompressor, and says how each went.
func loadModules(paths []string) string {
	var res []string
	for _, p := range paths {
		flags, how := 0, "loaded"
		if !strings.HasSuffix(p, ".ko") {
			flags = unix.MODULE_INIT_COMPRESSED_FILE
		}
		f, err := os.Open(p)
		if err == nil {
			err = unix.FinitModule(int(f.Fd()), "", flags)
			f.Close()
		}
		switch {
		case errors.Is(err, unix.EEXIST):
			how = "built in or loaded"
		case flags != 0 && errors.Is(err, unix.EINVAL):
			how = "not loaded: " + err.Error() + "; compressed modules need CONFIG_MODULE_DECOMPRESS"
		case err != nil:
			how = "not loaded: " + err.Error()
		}
		name, _ := moduleName(filepath.Base(p))
		res = append(res, name+" ("+how+")")
	}
	return strings.Join(res, ", ")
}

// runGuest waits for the host's start frame, the one frame the host
// sends, then runs the binary as the spec says, its output sent as frames.
func runGuest(fw *frameWriter, port io.Reader) exitStatus {
	var spec guestSpec
	data, err := os.ReadFile(specPath)
	if err = cmp.Or(err, json.Unmarshal(data, &spec)); err != nil {
		return exitStatus{Err: specPath + ": " + err.Error()}
	}
	if len(spec.Modules) > 0 {
		err = appendFacts([]string{"vm.guest.modules: " + loadModules(spec.Modules)})
	}
	start, err2 := newHostReader(port).next()
	if err2 == io.EOF {
		err2 = errors.New("the host sent no start frame")
	} else if err2 == nil {
		err2 = appendFacts(strings.Split(string(start.payload), "\n"))
	}
	if err = cmp.Or(err, err2); err != nil {
		return exitStatus{Err: err.Error()}
	}
	var notes []string
	for _, rl := range spec.Rlimits {
		lim := unix.Rlimit{Cur: rl.Cur, Max: rl.Max}
		if err := unix.Setrlimit(rl.Resource, &lim); err != nil {
			notes = append(notes, fmt.Sprintf("RLIMIT_%s %d/%d: %v", rlimitNames[rl.Resource], rl.Cur, rl.Max, err))
		}
	}
	if len(notes) > 0 {
		fw.write(frameNote, []byte("guest kept its own rlimits where the host's were refused: "+strings.Join(notes, "; ")))
	}

	cmd := exec.Command(spec.Path)
	cmd.Args, cmd.Env, cmd.Dir = spec.Args, spec.Env, spec.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if spec.UID != 0 || spec.GID != 0 {
		groups := make([]uint32, len(spec.Groups))
		for i, g := range spec.Groups {
			groups[i] = uint32(g)
		}
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(spec.UID), Gid: uint32(spec.GID), Groups: groups}
	}
	// The same writer for both is one pipe, as on the host (exec.Cmd).
	cmd.Stdout, cmd.Stderr = frameOut{fw, frameStdout}, frameOut{fw, frameStderr}
	if spec.OneStream {
		cmd.Stderr = cmd.Stdout
	}
	if err := cmd.Start(); err != nil {
		return exitStatus{Err: err.Error()}
	}
	err = cmd.Wait() // and for the binary's output, to its end
	sendOutputs(fw, spec.Outputs)
	if ps := cmd.ProcessState; ps != nil {
		if ws := ps.Sys().(syscall.WaitStatus); ws.Signaled() {
			return exitStatus{Signal: int(ws.Signal())}
		}
		return exitStatus{Code: ps.ExitCode()}
	}
	return exitStatus{Err: err.Error()}
}

// frameOut sends what is written to it as frames of one type.
type frameOut struct {
	fw  *frameWriter
	typ byte
}

func (o frameOut) Write(p []byte) (int, error) { return len(p), o.fw.write(o.typ, p) }

// appendFacts adds the host's late facts to the fingerprint's VM file.
func appendFacts(facts []string) error {
	f, err := os.OpenFile("/"+fingerprint.VMFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	for _, l := range facts {
		fmt.Fprintln(f, l)
	}
	return f.Close()
}

// sendOutputs sends the regular files at or below each output path.
func sendOutputs(fw *frameWriter, outputs []string) {
	for _, out := range outputs {
		filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return nil
			}
			data, err := os.ReadFile(p)
			if err != nil {
				fw.write(frameNote, []byte("output "+p+": "+err.Error()))
				return nil
			}
			fw.write(frameFile, []byte(p))
			fw.write(frameData, data)
			return nil
		})
	}
}
