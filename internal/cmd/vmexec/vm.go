//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// bootResult is how one boot ended.
type bootResult struct {
	status      *exitStatus    // the binary's end, when init reported it
	err         error          // why there is no status
	probeFailed bool           // a KVM probe boot showed no sign of life in time
	signal      syscall.Signal // vmexec was interrupted by this signal
}

// cmdline is the guest's kernel command line: the console on ttyS0,
// panics and reboots end QEMU at once (a guest on a busy host, under TCG
// most of all, can miss the IO-APIC timer check's deadline and panic with
// "IO-APIC + timer doesn't work!": vm-check's rerun of kbab retries such a boot; the check is
// kept, since skipping it with no_timer_check coincided with guests that
// hung silently), softlockup_panic=1 as lkp boots its kernels (a guest
// whose CPUs are stuck in the kernel, as one TCG guest's were for over 9
// minutes in text patching and a TLB-flush IPI, panics, which vmexec
// reports with its console, instead of hanging the run), then the
// user's -append.
func (h *host) cmdline() string {
	s := "console=ttyS0,115200 8250.nr_uarts=4 panic=-1 softlockup_panic=1 rdinit=/init"
	if h.cfg.append != "" {
		s += " " + h.cfg.append
	}
	return s
}

func (h *host) qemuArgs(accel string) []string {
	a := []string{
		"-nodefaults", "-no-user-config", "-display", "none", "-no-reboot",
		"-smp", strconv.Itoa(h.cfg.smp), "-m", h.cfg.memory,
		"-kernel", h.image, "-initrd", h.initrd, "-append", h.cmdline() + h.tcgCmdline(accel),
		"-chardev", "file,id=con,path=/proc/self/fd/3", "-serial", "chardev:con",
		"-chardev", "pipe,id=data,path=" + filepath.Join(h.tmp, "data"), "-serial", "chardev:data",
		"-qmp", "unix:" + h.qmpPath() + ",server=on,wait=off",
	}
	if accel == "kvm" {
		return append(a, "-accel", "kvm", "-cpu", "host")
	}
	return append(a, "-accel", "tcg,thread=multi", "-cpu", "max")
}

func (h *host) qmpPath() string { return filepath.Join(h.tmp, "qmp.sock") }

// boot runs the guest once. With probe, it gives up early (probeFailed)
// when the kernel shows no sign of life within -kvm-probe.
func (h *host) boot(accel string, probe bool, accelFact string) bootResult {
	h.accel = accel
	data := filepath.Join(h.tmp, "data")
	var in, out *os.File
	for _, p := range []string{data + ".in", data + ".out"} {
		os.Remove(p)
		if err := unix.Mkfifo(p, 0o600); err != nil {
			return bootResult{err: err}
		}
	}
	in, err := os.OpenFile(data+".in", os.O_RDWR, 0)
	if err != nil {
		return bootResult{err: err}
	}
	defer in.Close()
	out, err = os.OpenFile(data+".out", os.O_RDWR, 0)
	if err != nil {
		return bootResult{err: err}
	}
	defer out.Close()
	conR, conW, err := os.Pipe()
	if err != nil {
		return bootResult{err: err}
	}
	defer conR.Close()
	os.Remove(h.qmpPath())

	var qemuErr bytes.Buffer
	cmd := exec.Command(h.qemu, h.qemuArgs(accel)...)
	cmd.ExtraFiles = []*os.File{conW}
	cmd.Stdout = &qemuErr
	cmd.Stderr = &qemuErr
	// QEMU dies with vmexec, even by SIGKILL; its own process group keeps
	// a terminal's Ctrl-C for vmexec, which tears it down.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	fmt.Fprintf(h.log, "\n=== vmexec: %s %s\n", h.qemu, strings.Join(cmd.Args[1:], " "))
	started := time.Now()
	if err := cmd.Start(); err != nil {
		conW.Close()
		return bootResult{err: fmt.Errorf("starting %s: %w", h.qemu, err)}
	}
	conW.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	kill := func() {
		cmd.Process.Kill()
	}
	defer func() {
		kill()
		<-exitedOnce(exited)
	}()

	con := newConsole()
	go con.scan(conR, h.log)
	frames := make(chan hostFrame, 64)
	readerDone := make(chan struct{})
	var readerErr error
	go func(done chan struct{}) {
		readerErr = h.readGuest(out, frames)
		close(done)
	}(readerDone)
	fw := &frameWriter{w: in}

	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	defer signal.Stop(sigs)

	limit := h.cfg.bootTimeout
	if probe {
		limit = h.cfg.kvmProbe
	}
	bootTimer := time.NewTimer(limit)
	defer bootTimer.Stop()
	var overall <-chan time.Time
	if h.cfg.timeout > 0 {
		t := time.NewTimer(h.cfg.timeout)
		defer t.Stop()
		overall = t.C
	}
	alive := con.alive
	helloSeen := false
	var status *exitStatus
	var afterExit <-chan time.Time // grace for QEMU to power off
	var res bootResult
	fail := func(format string, args ...any) bootResult {
		return bootResult{err: h.bootError(fmt.Sprintf(format, args...), con, &qemuErr)}
	}
	for {
		select {
		case <-alive:
			alive = nil
			if probe && !helloSeen {
				// Past the decompressor: KVM runs this kernel.
				bootTimer.Reset(h.cfg.bootTimeout)
				probe = false
			}
		case f := <-frames:
			switch f.typ {
			case frameHello:
				helloSeen = true
				probe = false
				bootTimer.Stop()
				h.bootTime = time.Since(started)
				boot := "vm.boot: init ran " + h.bootTime.Round(time.Millisecond).String() + " after QEMU started"
				if t := con.firstLine(); !t.IsZero() {
					boot += " (the kernel's first console line at " + t.Sub(started).Round(time.Millisecond).String() + ")"
				}
				fmt.Fprintf(h.log, "\n=== %s\n", boot)
				facts := append([]string{accelFact}, boot)
				facts = append(facts, "vm.pinning: "+h.pin(cmd.Process.Pid))
				payload, _ := json.Marshal(facts)
				if err := fw.write(frameStart, payload); err != nil {
					return fail("sending the start frame: %v", err)
				}
			case frameExit:
				status = &exitStatus{}
				if err := json.Unmarshal(f.payload, status); err != nil {
					return fail("bad exit frame: %v", err)
				}
				t := time.NewTimer(15 * time.Second)
				defer t.Stop()
				afterExit = t.C
			}
		case <-readerDone:
			// Only a corrupt stream ends the reader while QEMU runs.
			readerDone = nil
			if status == nil && !errors.Is(readerErr, os.ErrDeadlineExceeded) {
				kill()
				return fail("reading the guest's data port: %v", readerErr)
			}
		case <-afterExit:
			// The guest did not power off (no ACPI?): its work is done.
			kill()
		case line := <-con.panic:
			select {
			case <-exited:
			case <-time.After(3 * time.Second):
			}
			h.finishRead(out, readerDone)
			if status != nil {
				return bootResult{status: status}
			}
			return fail("guest kernel panic: %s", line)
		case <-bootTimer.C:
			if probe {
				return bootResult{probeFailed: true, err: fmt.Errorf("no console output within -kvm-probe=%v", h.cfg.kvmProbe)}
			}
			return fail("the kernel did not reach init within -boot-timeout=%v", h.cfg.bootTimeout)
		case <-overall:
			if helloSeen && status == nil {
				// Let the binary print where it is, as go test's own timeout does.
				fw.write(frameSignal, []byte{byte(syscall.SIGQUIT)})
				select {
				case f := <-frames:
					_ = f
				case <-time.After(5 * time.Second):
				}
			}
			kill()
			h.finishRead(out, readerDone)
			return fail("-timeout=%v reached; the guest was killed", h.cfg.timeout)
		case s := <-sigs:
			sig := s.(syscall.Signal)
			if sig == syscall.SIGQUIT && helloSeen && status == nil {
				fw.write(frameSignal, []byte{byte(sig)})
				continue
			}
			kill()
			h.finishRead(out, readerDone)
			res = bootResult{signal: sig, err: fmt.Errorf("interrupted by %v; the guest was killed", sig)}
			return res
		case err := <-exited:
			exited <- err
			h.finishRead(out, readerDone)
			<-con.done
			// Frames read before the end may still be queued.
			for {
				select {
				case f := <-frames:
					if f.typ == frameExit {
						status = &exitStatus{}
						json.Unmarshal(f.payload, status)
					} else if f.typ == frameHello {
						helloSeen = true
					}
					continue
				default:
				}
				break
			}
			if status != nil {
				return bootResult{status: status}
			}
			if line := firstPanic(con.tail()); line != "" {
				return fail("guest kernel panic: %s", line)
			}
			if probe && !helloSeen {
				return bootResult{probeFailed: true, err: fmt.Errorf("QEMU ended (%v): %s", err, lastLine(qemuErr.String()))}
			}
			if !helloSeen {
				return fail("QEMU ended (%v) before the kernel reached init", err)
			}
			return fail("QEMU ended (%v) while the test binary ran, with no exit status from the guest", err)
		}
	}
}

// exitedOnce yields the QEMU wait result whether or not it was consumed.
func exitedOnce(ch chan error) <-chan error {
	out := make(chan error, 1)
	go func() {
		select {
		case err := <-ch:
			ch <- err
			out <- err
		case <-time.After(10 * time.Second):
			out <- errors.New("QEMU did not end")
		}
	}()
	return out
}

func firstPanic(lines []string) string {
	for _, l := range lines {
		if i := strings.Index(l, "Kernel panic - not syncing"); i >= 0 {
			return strings.TrimSpace(l[i:])
		}
	}
	return ""
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// finishRead lets the frame reader take what is left in the FIFO, then
// stops it.
func (h *host) finishRead(out *os.File, readerDone <-chan struct{}) {
	out.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if readerDone != nil {
		<-readerDone
	}
}

// readGuest copies the binary's output to vmexec's stdout and stderr as
// it arrives and passes the other frames on.
func (h *host) readGuest(r io.Reader, frames chan<- hostFrame) error {
	var out *os.File // the output file being received
	defer func() {
		if out != nil {
			out.Close()
		}
	}()
	for {
		typ, payload, err := readFrame(r)
		if err != nil {
			return err
		}
		switch typ {
		case frameFile:
			if out != nil {
				out.Close()
				out = nil
			}
			p := string(payload)
			if !h.isOutput(p) {
				fmt.Fprintf(os.Stderr, "vmexec: the guest sent %s, which is no output of the binary; dropped\n", p)
				continue
			}
			os.MkdirAll(filepath.Dir(p), 0o755)
			if out, err = os.Create(p); err != nil {
				fmt.Fprintf(os.Stderr, "vmexec: the binary's output %s: %v\n", p, err)
				out = nil
			}
		case frameData:
			if out != nil {
				if _, err := out.Write(payload); err != nil {
					fmt.Fprintf(os.Stderr, "vmexec: the binary's output %s: %v\n", out.Name(), err)
				}
			}
		case frameStdout:
			os.Stdout.Write(payload)
		case frameStderr:
			os.Stderr.Write(payload)
		case frameNote:
			fmt.Fprintf(os.Stderr, "vmexec: guest: %s\n", payload)
		default:
			frames <- hostFrame{typ, payload}
		}
	}
}

// bootError describes a failed boot: what happened, the likely cause,
// the console's last lines and where the whole log is.
func (h *host) bootError(what string, con *console, qemuErr *bytes.Buffer) error {
	var b strings.Builder
	b.WriteString(what)
	tail := con.tail()
	if msgs := con.initMessages(); len(msgs) > 0 {
		b.WriteString("\nthe guest's init said: " + strings.Join(msgs, "; "))
	} else if len(tail) == 0 && h.accel == "kvm" {
		b.WriteString("\nlikely cause: KVM does not run this kernel on this host (nested and PVM hosts hang in the decompressor); try -accel auto or -accel tcg")
	} else if hn := hint(tail); hn != "" {
		b.WriteString("\nlikely cause: " + hn)
	}
	if s := strings.TrimSpace(qemuErr.String()); s != "" {
		b.WriteString("\nQEMU said:\n" + s)
	}
	if len(tail) > 0 {
		b.WriteString("\nlast console lines:\n  " + strings.Join(tail, "\n  "))
	}
	h.keepLog = true
	b.WriteString("\nfull console log: " + h.logPath)
	return errors.New(b.String())
}

// isOutput says whether p is one of the binary's outputs or below one.
func (h *host) isOutput(p string) bool {
	p = filepath.Clean(p)
	for _, o := range h.outputs {
		if p == o || strings.HasPrefix(p, o+"/") {
			return true
		}
	}
	return false
}
