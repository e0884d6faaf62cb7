//go:build linux

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/u-root/u-root/pkg/cpio"
)

// The test binary is also a fake QEMU, selected by fakeQEMUEnv: vmexec's
// -qemu runs it with QEMU's command line as vmexec builds it. It checks
// that command line, answers --version and the monitor, and plays a guest on the
// console (fd 3, as -chardev file,path=/proc/self/fd/3 gives QEMU) and on
// the data port (fd 4, a socket), with frames as vmexec's init sends them. The
// variable names the guest (fakeGuests); under -accel kvm, fakeKVMEnv
// names it when set, so that a KVM probe can fail and TCG succeed.
const (
	fakeQEMUEnv = "GO_VMEXEC_FAKE_QEMU"
	fakeKVMEnv  = "GO_VMEXEC_FAKE_KVM"
)

// fakeVM is the fake's view of the guest it plays.
type fakeVM struct {
	con    io.Writer    // the kernel console
	fw     *frameWriter // to the host
	fr     *frameReader // from the host
	spec   guestSpec    // what vmexec's initramfs tells init to run
	facts  []string     // the start frame's
	kernel string       // -kernel
}

// fakeGuests are the guests the fake plays; each returns QEMU's exit
// status (0: the guest powered off).
var fakeGuests = map[string]func(vm *fakeVM) int{
	// Init runs the binary, which prints, writes its outputs and exits 3.
	"ok": func(vm *fakeVM) int {
		if err := vm.hello(); err != nil {
			return vm.die(err)
		}
		vm.run()
		vm.exit(`{"code":3}`)
		return 0
	},
	// The kernel takes a while after its first line (a KVM boot past the
	// decompressor, slower than -kvm-probe to reach init).
	"slow": func(vm *fakeVM) int {
		vm.console("Linux version 0.0.0-fake (vmexec's test QEMU)")
		time.Sleep(3 * time.Second)
		if err := vm.hello(); err != nil {
			return vm.die(err)
		}
		vm.run()
		vm.exit(`{"code":3}`)
		return 0
	},
	"exit-signal": func(vm *fakeVM) int {
		if err := vm.hello(); err != nil {
			return vm.die(err)
		}
		vm.fw.write(frameStdout, []byte("dying\n"))
		vm.exit(`{"signal":9}`)
		return 0
	},
	// Init cannot set up the guest (no devtmpfs) and says so before it
	// said hello.
	"init-error": func(vm *fakeVM) int {
		vm.console("Linux version 0.0.0-fake", "vmexec-init: mount devtmpfs on /dev: no such device (the kernel needs CONFIG_DEVTMPFS)")
		vm.exit(`{"err":"mount devtmpfs on /dev: no such device (the kernel needs CONFIG_DEVTMPFS)"}`)
		return 0
	},
	// Init cannot open the data port: its message is on the console only.
	"no-port": func(vm *fakeVM) int {
		vm.console("Linux version 0.0.0-fake", "vmexec-init: open /dev/ttyS1: no such device (the kernel needs CONFIG_SERIAL_8250 with at least 2 ports, 8250.nr_uarts>=2)")
		return 0
	},
	// panic=-1 and -no-reboot: QEMU ends at the panic.
	"panic": func(vm *fakeVM) int {
		vm.console("Linux version 0.0.0-fake", "VFS: Cannot open root device \"(null)\" or unknown-block(0,0): error -6",
			"Kernel panic - not syncing: VFS: Unable to mount root fs on unknown-block(0,0)")
		return 0
	},
	// A QEMU that goes on after the panic.
	"panic-hang": func(vm *fakeVM) int {
		vm.console("Linux version 0.0.0-fake", "Kernel panic - not syncing: No working init found.")
		return vm.hang()
	},
	// An oops kills the binary (an int3 in text patching, as TCG guests
	// showed), and the guest goes on.
	"oops": func(vm *fakeVM) int {
		if err := vm.hello(); err != nil {
			return vm.die(err)
		}
		vm.fw.write(frameStdout, []byte("ready\n"))
		vm.console("int3: 0000 [#1] PREEMPT SMP NOPTI", "RIP: 0010:__schedule+0x2a4/0x8a0")
		time.Sleep(100 * time.Millisecond)
		vm.exit(`{"signal":11}`)
		return 0
	},
	// The binary ended, then the kernel panicked (at power-off).
	"panic-after-exit": func(vm *fakeVM) int {
		if err := vm.hello(); err != nil {
			return vm.die(err)
		}
		vm.exit(`{"code":0}`)
		vm.console("Kernel panic - not syncing: Attempted to kill init! exitcode=0x00000000")
		return vm.hang()
	},
	// The kernel never prints a line (a decompressor hang).
	"silent": func(vm *fakeVM) int { return vm.hang() },
	// The kernel starts and stops before init.
	"no-init": func(vm *fakeVM) int {
		vm.console("Linux version 0.0.0-fake", "Freeing unused kernel image (initmem) memory: 2660K", "Out of memory: Killed process 1 (init)")
		return vm.hang()
	},
	// The binary runs silently for 6 s while init's heartbeat goes on,
	// then exits 0.
	"beating": func(vm *fakeVM) int {
		if err := vm.hello(); err != nil {
			return vm.die(err)
		}
		for range 30 {
			time.Sleep(200 * time.Millisecond)
			vm.fw.write(frameBeat, nil)
		}
		vm.exit(`{"code":0}`)
		return 0
	},
	// The binary says it is ready and hangs.
	"hang": func(vm *fakeVM) int {
		if err := vm.hello(); err != nil {
			return vm.die(err)
		}
		vm.fw.write(frameStdout, []byte("ready\n"))
		return vm.hang()
	},
	// QEMU is killed before the kernel reached init, and while the binary
	// runs.
	"killed-early": func(vm *fakeVM) int {
		vm.console("Linux version 0.0.0-fake")
		return vm.kill()
	},
	"killed": func(vm *fakeVM) int {
		if err := vm.hello(); err != nil {
			return vm.die(err)
		}
		vm.fw.write(frameStdout, []byte("ready\n"))
		return vm.kill()
	},
	// A length no frame has, before the binary ended, and after.
	"corrupt": func(vm *fakeVM) int {
		if err := vm.hello(); err != nil {
			return vm.die(err)
		}
		vm.fw.w.Write([]byte{frameStdout, 0xff, 0xff, 0xff, 0xff})
		return vm.hang()
	},
	"corrupt-after-exit": func(vm *fakeVM) int {
		if err := vm.hello(); err != nil {
			return vm.die(err)
		}
		vm.exit(`{"code":0}`)
		vm.fw.w.Write([]byte{'Z', 0, 0, 0, 0})
		return vm.hang()
	},
	"bad-exit": func(vm *fakeVM) int {
		if err := vm.hello(); err != nil {
			return vm.die(err)
		}
		vm.exit(`{"code":300}`)
		return vm.hang()
	},
	// A bad exit frame as QEMU ends: vmexec reads it after the end.
	"bad-exit-at-end": func(vm *fakeVM) int {
		if err := vm.hello(); err != nil {
			return vm.die(err)
		}
		vm.exit(`null`)
		return 0
	},
	"two-exits": func(vm *fakeVM) int {
		if err := vm.hello(); err != nil {
			return vm.die(err)
		}
		vm.exit(`{"code":0}`)
		vm.exit(`{"code":1}`)
		return vm.hang()
	},
	// A bad exit frame after the panic line, as QEMU ends.
	"panic-bad-exit": func(vm *fakeVM) int {
		if err := vm.hello(); err != nil {
			return vm.die(err)
		}
		vm.console("Kernel panic - not syncing: Attempted to kill init! exitcode=0x00000000")
		time.Sleep(100 * time.Millisecond)
		vm.exit(`{"signal":99}`)
		return 0
	},
	// Frames keep coming after the boot failed.
	"flood": func(vm *fakeVM) int {
		if err := vm.hello(); err != nil {
			return vm.die(err)
		}
		vm.exit(`[]`)
		for range 64 {
			vm.fw.write(frameHello, nil)
		}
		return vm.hang()
	},
	// QEMU starts a helper that outlives it, holding the console open.
	"leak-child": func(vm *fakeVM) int {
		if err := vm.hello(); err != nil {
			return vm.die(err)
		}
		self, _ := os.Executable()
		child := exec.Command(self, "child", vm.kernel)
		child.Env = append(os.Environ(), fakeQEMUEnv+"=child")
		child.ExtraFiles = []*os.File{vm.con.(*os.File)}
		if err := child.Start(); err != nil {
			return vm.die(err)
		}
		vm.exit(`{"code":0}`)
		return 0
	},
	"two-hellos": func(vm *fakeVM) int {
		if err := vm.hello(); err != nil {
			return vm.die(err)
		}
		vm.fw.write(frameHello, nil)
		return vm.hang()
	},
	// No ACPI: the guest cannot power off after the binary ended.
	"no-poweroff": func(vm *fakeVM) int {
		if err := vm.hello(); err != nil {
			return vm.die(err)
		}
		vm.exit(`{"code":0}`)
		return vm.hang()
	},
	// QEMU refuses to start the accelerator.
	"qemu-error": func(vm *fakeVM) int {
		fmt.Fprintln(os.Stderr, "qemu-system-x86_64: -accel kvm: failed to initialize kvm: Permission denied")
		return 1
	},
}

// fakeQEMU is the fake's main.
func fakeQEMU(args []string) int {
	if len(args) == 2 && args[0] == "child" {
		// leak-child's helper: the kernel image on its command line
		// tells noQEMULeft whose it is.
		time.Sleep(time.Minute)
		return 0
	}
	if len(args) == 1 && args[0] == "--version" {
		fmt.Println("QEMU emulator version 0.0.0 (vmexec's test fake)\nCopyright (c) nobody")
		return 0
	}
	opt, err := fakeArgs(args)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake qemu:", err)
		return 1
	}
	guest := os.Getenv(fakeQEMUEnv)
	if k := os.Getenv(fakeKVMEnv); k != "" && opt["-accel"] == "kvm" {
		guest = k
	}
	play, ok := fakeGuests[guest]
	if !ok {
		fmt.Fprintf(os.Stderr, "fake qemu: no guest %q\n", guest)
		return 1
	}
	vm := &fakeVM{con: os.NewFile(3, "console"), kernel: opt["-kernel"]}
	if vm.spec, err = fakeSpec(opt["-initrd"]); err != nil {
		fmt.Fprintln(os.Stderr, "fake qemu:", err)
		return 1
	}
	// As QEMU's socket chardev on fd 4.
	data := os.NewFile(4, "data")
	vm.fw, vm.fr = &frameWriter{w: data}, newHostReader(data)
	go serveMonitor(os.NewFile(5, "monitor"), opt["-smp"])
	return play(vm)
}

// fakeArgs checks QEMU's command line as vmexec builds it and returns its
// options by name (the console and data chardevs by their ids).
func fakeArgs(args []string) (map[string]string, error) {
	opt := map[string]string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch a {
		case "-nodefaults", "-no-user-config", "-no-reboot":
			opt[a] = "on"
			continue
		}
		if !strings.HasPrefix(a, "-") || i+1 == len(args) {
			return nil, fmt.Errorf("argument %d, %q: not an option with a value", i, a)
		}
		v := args[i+1]
		i++
		if a == "-chardev" {
			id, _, _ := strings.Cut(strings.TrimPrefix(v[strings.Index(v, "id="):], "id="), ",")
			a = id
		}
		opt[a] = v
	}
	for k, want := range map[string]string{
		"-nodefaults": "on", "-no-reboot": "on", "-display": "none",
		"con": "file,id=con,path=/proc/self/fd/3",
	} {
		if opt[k] != want {
			return nil, fmt.Errorf("%s is %q, want %q", k, opt[k], want)
		}
	}
	for _, w := range []string{"panic=-1", "rdinit=/init", "console=ttyS0"} {
		if !strings.Contains(opt["-append"], w) {
			return nil, fmt.Errorf("-append %q lacks %s", opt["-append"], w)
		}
	}
	if err := checkImage(opt["-kernel"]); err != nil {
		return nil, err
	}
	if opt["data"] != "socket,id=data,fd=4" || opt["mon"] != "socket,id=mon,fd=5" || opt["-mon"] != "chardev=mon,mode=readline" {
		return nil, fmt.Errorf("no data port socket or monitor socket: %q", args)
	}
	if a := opt["-accel"]; a != "kvm" && a != "tcg,thread=multi" {
		return nil, fmt.Errorf("-accel %q", a)
	}
	return opt, nil
}

// fakeSpec reads init's instructions from the initramfs, as the guest's
// init would find them.
func fakeSpec(initrd string) (guestSpec, error) {
	var spec guestSpec
	f, err := os.Open(initrd)
	if err != nil {
		return spec, err
	}
	defer f.Close()
	recs, err := cpio.ReadAllRecords(cpio.Newc.Reader(f))
	if err != nil {
		return spec, fmt.Errorf("%s: %v", initrd, err)
	}
	var hasInit bool
	for _, r := range recs {
		hasInit = hasInit || r.Name == "init"
		if "/"+r.Name == specPath {
			b, err := io.ReadAll(io.NewSectionReader(r, 0, int64(r.FileSize)))
			if err != nil {
				return spec, err
			}
			if err := json.Unmarshal(b, &spec); err != nil {
				return spec, err
			}
		}
	}
	if !hasInit || spec.Path == "" {
		return spec, fmt.Errorf("%s holds no /init or no %s", initrd, specPath)
	}
	return spec, nil
}

// serveMonitor answers vmexec's commands on QEMU's human monitor, as
// QEMU does: a greeting and a prompt, then for each command line its echo
// (as readline draws it), its output and a prompt.
func serveMonitor(f *os.File, smp string) {
	var n int
	fmt.Sscan(smp, &n)
	io.WriteString(f, "QEMU 10.0.2 monitor - type 'help' for more information\r\n(qemu) ")
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var out strings.Builder
		out.WriteString(sc.Text() + "\x1b[K\r\n")
		for i := range n {
			switch sc.Text() {
			case "info cpus":
				fmt.Fprintf(&out, "  CPU #%d: thread_id=%d\r\n", i, os.Getpid())
			case "info registers -a":
				// cut to what vmexec reads
				fmt.Fprintf(&out, "\r\nCPU#%d\r\nRAX=0000000000000000 RBX=0000000000000000\r\nRIP=ffffffff8100%04x RFL=00000246 [---Z-P-] CPL=0 II=0 A20=1 SMM=0 HLT=0\r\n", i, 0x10+i*0x100)
			}
		}
		// written in two pieces, as a reader may get them
		io.WriteString(f, out.String())
		io.WriteString(f, "(qemu) ")
	}
}

// console writes kernel console lines.
func (vm *fakeVM) console(lines ...string) {
	for _, l := range lines {
		fmt.Fprintf(vm.con, "[    0.000000] %s\r\n", l)
	}
}

// hello boots as far as init, says hello and waits for the start frame.
func (vm *fakeVM) hello() error {
	vm.console("Linux version 0.0.0-fake (vmexec's test QEMU)", "Run /init as init process")
	vm.fw.write(frameHello, nil)
	f, err := vm.fr.next()
	if err != nil {
		return err
	}
	if f.typ != frameStart {
		return fmt.Errorf("frame %q before the start frame", f.typ)
	}
	vm.facts = strings.Split(string(f.payload), "\n")
	return nil
}

// run plays the binary: output on both streams, a note from init, the
// outputs the spec names (and a file that is none), as init sends them.
func (vm *fakeVM) run() {
	vm.fw.write(frameNote, []byte("facts: "+strings.Join(vm.facts, "; ")))
	vm.fw.write(frameStdout, []byte("out: first\n"))
	vm.fw.write(frameStderr, []byte("err: second\n"))
	vm.fw.write(frameStdout, []byte(fmt.Sprintf("out: \x00\r\n\xffbinary\nargs=%q\n", vm.spec.Args[1:])))
	vm.fw.write(frameFile, []byte("/etc/passwd"))
	vm.fw.write(frameData, []byte("root::0:0::/:/bin/sh\n"))
	for _, o := range vm.spec.Outputs {
		if slices.Contains(vm.spec.Env, "GOCOVERDIR="+o) {
			continue // go test -cover's, not this test's
		}
		if !slices.Contains(vm.spec.Env, "KBENCH_PROFILE="+o) {
			// A -test.*profile file.
			vm.fw.write(frameFile, []byte(o))
			vm.fw.write(frameData, []byte("cpu"))
			continue
		}
		// The KBENCH_PROFILE directory: a file the host cannot create (a
		// directory there), and one over a frame, the last frame.
		vm.fw.write(frameFile, []byte(o+"/adir"))
		vm.fw.write(frameData, []byte("lost"))
		vm.fw.write(frameFile, []byte(o+"/row.pprof"))
		vm.fw.write(frameData, bytes.Repeat([]byte("pprof\x00"), 300000))
	}
}

func (vm *fakeVM) exit(status string) { vm.fw.write(frameExit, []byte(status)) }

func (vm *fakeVM) hang() int {
	time.Sleep(time.Hour)
	return 1
}

func (vm *fakeVM) kill() int {
	syscall.Kill(os.Getpid(), syscall.SIGKILL)
	return vm.hang()
}

// die ends the fake when the host did not do its part.
func (vm *fakeVM) die(err error) int {
	fmt.Fprintln(os.Stderr, "fake qemu:", err)
	return 1
}
