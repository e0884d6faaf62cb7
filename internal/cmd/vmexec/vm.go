//go:build linux

package main

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/kbench/kbench/internal/vmflags"
)

// bootResult is how one boot ended.
type bootResult struct {
	status      *exitStatus    // the binary's end, when init reported it
	err         error          // why there is no status
	probeFailed bool           // a KVM probe boot showed no sign of life in time
	signal      syscall.Signal // vmexec was interrupted by this signal
}

// cmdline is the guest's kernel command line: vmexec's own, the user's
// -append, and on a TCG boot -tcg-append.
func (h *host) cmdline(accel string) string {
	s := strings.TrimSpace(vmflags.OwnCmdline + " " + h.cfg.append)
	if accel == "tcg" && h.cfg.tcgAppend != "" {
		s += " " + h.cfg.tcgAppend
	}
	return s
}

func (h *host) qemuArgs(accel string) []string {
	a := []string{
		"-nodefaults", "-no-user-config", "-display", "none", "-no-reboot",
		"-smp", strconv.Itoa(h.cfg.smp), "-m", h.cfg.memory,
		"-kernel", h.image, "-initrd", h.initrd, "-append", h.cmdline(accel),
		"-chardev", "file,id=con,path=/proc/self/fd/3", "-serial", "chardev:con",
		"-chardev", "socket,id=data,fd=4", "-serial", "chardev:data",
		"-chardev", "socket,id=mon,fd=5", "-mon", "chardev=mon,mode=readline",
	}
	if accel == "kvm" {
		return append(a, "-accel", "kvm", "-cpu", "host")
	}
	return append(a, "-accel", "tcg,thread=multi", "-cpu", "max")
}

// graces are how long the boot loop waits for things that normally take
// no time; tests shorten them.
type graces struct {
	powerOff time.Duration // after the exit status, for the guest to power off (no ACPI: it does not)
	panicEnd time.Duration // after a panic line, for QEMU to end (panic=-1)
	qemuEnd  time.Duration // after SIGKILL, for QEMU to be gone; for the data port's last bytes
}

var defaultGraces = graces{powerOff: 15 * time.Second, panicEnd: 3 * time.Second, qemuEnd: 10 * time.Second}

// boot is one QEMU run of the guest: how it was started and what it has
// seen so far. A run of vmexec boots once, or twice when a KVM probe
// falls back to TCG; each boot is its own value, on the run's host.
type boot struct {
	h     *host
	accel string // kvm or tcg
	fact  string // its vm.accel fingerprint line
	probe bool   // a KVM probe: give up early while the kernel is silent

	cmd     *exec.Cmd
	started time.Time
	qemuErr bytes.Buffer // what QEMU printed
	con     *console
	data    net.Conn      // the data port: a socket pair whose other end is QEMU's fd 4
	mon     net.Conn      // QEMU's human monitor, its fd 5 (pin, froze)
	greeted bool          // the monitor's greeting was read
	frames  chan frame    // the guest's hello and exit frames; closed when the reader stops
	readErr error         // why the reader stopped, once frames is closed
	exited  chan struct{} // closed when QEMU has ended
	waitErr error         // how QEMU ended, once exited is closed

	progress progress // what the guest sent, and when

	hello    bool        // init is running
	status   *exitStatus // the binary's end, once init sent it
	bootTime time.Duration
}

// boot runs the guest once under accel. With probe, it gives up early
// (probeFailed) when the kernel shows no sign of life within -kvm-probe.
func (h *host) boot(accel, fact string, probe bool) bootResult {
	b := &boot{h: h, accel: accel, fact: fact, probe: probe}
	defer b.stop()
	if err := b.start(); err != nil {
		return bootResult{err: err} // a *failure: start says whose
	}
	return b.wait()
}

// start makes the data port, the monitor's socket and the console pipe
// and starts QEMU and the goroutines that read what it writes.
func (b *boot) start() error {
	var qemuData, qemuMon *os.File
	var err, err2 error
	b.data, qemuData, err = socketPair()
	b.mon, qemuMon, err2 = socketPair()
	defer qemuData.Close() // nil where its pair failed: Close says so, harmlessly
	defer qemuMon.Close()
	if err = cmp.Or(err, err2); err != nil {
		return fmt.Errorf("a socket pair for QEMU: %v", err)
	}
	conR, conW, err := os.Pipe()
	if err != nil {
		return err
	}

	b.cmd = exec.Command(b.h.qemu, b.h.qemuArgs(b.accel)...)
	b.cmd.ExtraFiles = []*os.File{conW, qemuData, qemuMon}
	b.cmd.Stdout, b.cmd.Stderr = &b.qemuErr, &b.qemuErr
	// QEMU dies with vmexec, even by SIGKILL; its own process group keeps
	// a terminal's Ctrl-C for vmexec, which tears it down.
	b.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	fmt.Fprintf(b.h.log, "\n=== vmexec: %s %s\n", b.h.qemu, strings.Join(b.cmd.Args[1:], " "))
	b.started = time.Now()
	b.progress.last.Store(b.started.UnixNano())
	err = b.cmd.Start()
	conW.Close()
	if err != nil {
		conR.Close()
		return &failure{vmflags.ExitQEMU, fmt.Errorf("starting %s: %w", b.h.qemu, err)}
	}
	b.exited = make(chan struct{})
	go func() {
		b.waitErr = b.cmd.Wait()
		close(b.exited)
	}()
	b.con = newConsole()
	go func() {
		b.con.scan(progressReader{conR, &b.progress}, b.h.log)
		conR.Close()
	}()
	b.frames = make(chan frame, 4)
	go func() {
		b.readErr = b.h.readGuest(progressReader{b.data, &b.progress}, func(f frame) { b.frames <- f })
		close(b.frames)
	}()
	return nil
}

// stop ends QEMU and the readers and closes the boot's files.
func (b *boot) stop() {
	if b.exited != nil {
		b.finish() // QEMU ended, the reader stopped
	}
	if b.con != nil {
		waitFor(b.con.done, b.h.grace.qemuEnd)
	}
	for _, c := range []net.Conn{b.data, b.mon} {
		if c != nil {
			c.Close()
		}
	}
}

// kill ends QEMU, and any process it started, and waits until QEMU has
// ended.
func (b *boot) kill() {
	syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL) // its process group
	b.cmd.Process.Kill()
	waitFor(b.exited, b.h.grace.qemuEnd)
}

// waitFor waits until ch is closed, at most d.
func waitFor(ch <-chan struct{}, d time.Duration) {
	select {
	case <-ch:
	case <-time.After(d):
	}
}

// wait is the boot loop: it reacts to the console, the guest's frames,
// the timers, vmexec's signals and QEMU's end until the boot is over.
func (b *boot) wait() bootResult {
	cfg := b.h.cfg
	limit := cfg.bootTimeout
	if b.probe {
		limit = cfg.kvmProbe
	}
	bootTimer := time.NewTimer(limit)
	defer bootTimer.Stop()
	alive, frames := b.con.alive, b.frames
	var powerOff <-chan time.Time
	var stall <-chan time.Time
	if cfg.stall > 0 {
		t := time.NewTicker(min(cfg.stall/8, time.Second))
		defer t.Stop()
		stall = t.C
	}
	for {
		select {
		case <-stall:
			if since := time.Since(time.Unix(0, b.progress.last.Load())); b.status == nil && since >= cfg.stall {
				return b.froze()
			}
		case <-alive:
			alive = nil
			if b.probe && !b.hello {
				// Past the decompressor: KVM runs this kernel.
				b.probe = false
				bootTimer.Reset(cfg.bootTimeout)
			}
		case f, ok := <-frames:
			if !ok {
				// The stream ends, or is cut, when QEMU ends (b.exited
				// follows); else it is corrupt.
				frames = nil
				if b.status == nil && !errors.Is(b.readErr, io.EOF) && !errors.Is(b.readErr, io.ErrUnexpectedEOF) {
					return b.fail(vmflags.ExitFailed, "%v", b.readErr)
				}
				continue
			}
			if err := b.take(f); err != nil {
				return b.fail(vmflags.ExitFailed, "%v", err)
			}
			if f.typ == frameHello {
				bootTimer.Stop()
				if err := b.sendStart(); err != nil {
					return b.fail(vmflags.ExitFailed, "sending the start frame: %v", err)
				}
			}
			if b.status != nil && powerOff == nil {
				powerOff = time.After(b.h.grace.powerOff)
			}
		case <-powerOff:
			// The guest did not power off (no ACPI?): its work is done.
			powerOff = nil
			b.kill()
		case <-b.con.panic:
			// panic=-1 and -no-reboot end QEMU at once; a moment for it,
			// and for the frames before the panic.
			waitFor(b.exited, b.h.grace.panicEnd)
			return b.ended()
		case <-bootTimer.C:
			if b.probe {
				return bootResult{probeFailed: true, err: fmt.Errorf("no console output within -kvm-probe=%v", cfg.kvmProbe)}
			}
			return b.fail(vmflags.ExitDied, "the kernel did not reach init within -boot-timeout=%v", cfg.bootTimeout)
		case s := <-b.h.signals:
			b.finish()
			return bootResult{signal: s.(syscall.Signal)}
		case <-b.exited:
			return b.ended()
		}
	}
}

// take notes a hello or exit frame.
func (b *boot) take(f frame) error {
	switch f.typ {
	case frameHello:
		if b.hello || len(f.payload) > 0 {
			return f.errorAt(fromGuest, "one empty hello frame", nil)
		}
		b.hello, b.probe = true, false
		b.bootTime = time.Since(b.started)
	case frameExit:
		if b.status != nil {
			return f.errorAt(fromGuest, "one exit frame", nil)
		}
		var err error
		b.status, err = decodeExit(f)
		return err
	}
	return nil
}

// sendStart tells the init to run the binary, with the facts known only
// now: the accelerator, the boot time, the vCPUs' pinning.
func (b *boot) sendStart() error {
	line := "vm.boot: init ran " + b.bootTime.Round(time.Millisecond).String() + " after QEMU started"
	if t := b.con.state().aliveAt; !t.IsZero() {
		line += " (the kernel's first console line at " + t.Sub(b.started).Round(time.Millisecond).String() + ")"
	}
	fmt.Fprintf(b.h.log, "\n=== %s\n", line)
	facts := b.fact + "\n" + line + "\nvm.pinning: " + b.pin()
	return (&frameWriter{w: b.data}).write(frameStart, []byte(facts))
}

// finish reads what QEMU wrote to the data port before it ended (killing
// it first, if it still runs) and stops the reader; it returns the first
// bad frame among them.
func (b *boot) finish() error {
	b.kill() // with QEMU's end of the data port closed, the reader gets the rest, then EOF
	deadline := time.AfterFunc(b.h.grace.qemuEnd, func() { b.data.SetReadDeadline(time.Now()) })
	defer deadline.Stop()
	var first error
	for f := range b.frames {
		if err := b.take(f); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// ended is a boot whose QEMU ended by itself, or that panicked.
func (b *boot) ended() bootResult {
	if err := b.finish(); err != nil {
		return b.fail(vmflags.ExitFailed, "%v", err)
	}
	waitFor(b.con.done, b.h.grace.qemuEnd)
	con, qe := b.con.state(), "QEMU ended (exit status 0)"
	if b.waitErr != nil {
		qe = "QEMU ended (" + b.waitErr.Error() + ")"
	}
	switch {
	case b.status != nil && con.oopsAt != "":
		// The binary's end came from a kernel that oopsed (a task it
		// killed, maybe the binary): the boot's results are not the
		// kernel's.
		return b.fail(vmflags.ExitDied, "the guest kernel oopsed: %s; the binary then ended %s", con.oopsAt, b.status)
	case b.status != nil:
		return bootResult{status: b.status}
	case con.panicAt != "":
		return b.fail(vmflags.ExitDied, "guest kernel panic: %s", con.panicAt)
	case b.probe:
		q := strings.Split(strings.TrimSpace(b.qemuErr.String()), "\n")
		return bootResult{probeFailed: true, err: fmt.Errorf("%s: %s", qe, q[len(q)-1])}
	case !b.hello:
		if con.aliveAt.IsZero() {
			// Before the kernel's first line: QEMU's own failure.
			return b.fail(vmflags.ExitQEMU, "%s before the kernel printed a line", qe)
		}
		return b.fail(vmflags.ExitDied, "%s before the kernel reached init", qe)
	}
	return b.fail(vmflags.ExitDied, "%s while the test binary ran, with no exit status from the guest", qe)
}

// readGuest copies the binary's output to vmexec's stdout and stderr and
// its output files to theirs as they arrive, and passes the hello and
// exit frames on, until the stream ends.
func (h *host) readGuest(r io.Reader, pass func(frame)) error {
	fr := newGuestReader(r)
	var out *os.File // the output file being received; Close of nil is a no-op error
	defer func() { out.Close() }()
	for {
		f, err := fr.next()
		if err != nil {
			return err
		}
		switch f.typ {
		case frameBeat:
			// init's heartbeat: progress, nothing to pass on.
		case frameFile:
			out.Close()
			out = nil
			p := filepath.Clean(string(f.payload))
			if !h.isOutput(p) {
				fmt.Fprintf(h.stderr, "vmexec: the guest sent %q, which is no output of the binary; dropped\n", f.payload)
				continue
			}
			os.MkdirAll(filepath.Dir(p), 0o755)
			if out, err = os.Create(p); err != nil { // out is nil then
				fmt.Fprintf(h.stderr, "vmexec: the binary's output %s: %v\n", p, err)
			}
		case frameData:
			if out != nil {
				if _, err := out.Write(f.payload); err != nil {
					fmt.Fprintf(h.stderr, "vmexec: the binary's output %s: %v\n", out.Name(), err)
				}
			}
		case frameStdout:
			h.stdout.Write(f.payload)
		case frameStderr:
			h.stderr.Write(f.payload)
		case frameNote:
			fmt.Fprintf(h.stderr, "vmexec: guest: %s\n", f.payload)
		default:
			pass(f)
		}
	}
}

// fail ends a boot with a message: what happened, the likely cause, the
// console's last lines and where the whole log is.
func (b *boot) fail(status int, format string, args ...any) bootResult {
	b.kill() // QEMU's output is whole once it has ended
	var s strings.Builder
	s.WriteString(fmt.Sprintf(format, args...))
	con := b.con.state()
	tail := con.lines
	if msgs := con.init; len(msgs) > 0 {
		s.WriteString("\nthe guest's init said: " + strings.Join(msgs, "; "))
	} else if hn := hint(tail, b.accel); hn != "" {
		s.WriteString("\nlikely cause: " + hn)
	}
	if q := strings.TrimSpace(b.qemuErr.String()); q != "" {
		s.WriteString("\nQEMU said:\n" + q)
	}
	if len(tail) > 0 {
		s.WriteString("\nlast console lines:\n  " + strings.Join(tail, "\n  "))
	}
	b.h.keepLog = true
	s.WriteString("\nfull console log: " + b.h.logPath)
	return bootResult{err: &failure{status, errors.New(s.String())}}
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

// A failure is an error with the exit status vmexec gives it
// (vmflags.ExitFailed, ExitQEMU, ExitDied, ExitFroze).
type failure struct {
	status int
	err    error
}

func (f *failure) Error() string { return f.err.Error() }

// statusOf is the exit status for a run's error: its failure's, else
// vmflags.ExitFailed.
func statusOf(err error) int {
	var f *failure
	if errors.As(err, &f) {
		return f.status
	}
	return vmflags.ExitFailed
}

// progress is when a guest last sent a byte, on either port (at first
// the boot's start), in nanoseconds; progressReader notes each read with
// bytes.
type progress struct{ last atomic.Int64 }

type progressReader struct {
	io.Reader
	p *progress
}

func (pr progressReader) Read(b []byte) (int, error) {
	n, err := pr.Reader.Read(b)
	if n > 0 {
		pr.p.last.Store(time.Now().UnixNano())
	}
	return n, err
}
