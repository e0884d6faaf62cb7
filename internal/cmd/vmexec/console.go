//go:build linux

package main

import (
	"bufio"
	"io"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// consoleTail is how many console lines a failure report shows.
const consoleTail = 25

// console reads the kernel console (ttyS0), copies it to the log, keeps
// what a failure report needs and signals what the host reacts to.
type console struct {
	mu    sync.Mutex
	seen  seen
	alive chan struct{} // closed at the kernel's first line ("Linux version")
	panic chan struct{} // closed at the first panic line
	done  chan struct{} // closed at EOF
}

// seen is what the console showed so far.
type seen struct {
	lines   []string  // the last consoleTail lines
	init    []string  // the guest init's own messages (vmexec-init: ...)
	aliveAt time.Time // when the kernel's first line came (zero: not yet)
	panicAt string    // the first panic line, from "Kernel panic" on
	oopsAt  string    // the kernel's first oops line (oopsLine), "" for none
}

func newConsole() *console {
	return &console{alive: make(chan struct{}), panic: make(chan struct{}), done: make(chan struct{})}
}

// state is a copy of what the console showed so far.
func (c *console) state() seen {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.seen
	s.lines, s.init = slices.Clone(s.lines), slices.Clone(s.init)
	return s
}

// oopsLine matches the line the kernel's die() prints for an oops,
// "TYPE: ERRORCODE [#N]": "Oops: 0002 [#1] PREEMPT SMP", "int3: 0000 [#1]".
var (
	oopsLine  = regexp.MustCompile(`: [0-9a-f]{4} \[#[0-9]+\]`)
	timestamp = regexp.MustCompile(`^\[ *[0-9]+\.[0-9]+\] `)
)

// scan reads r until EOF, copying it to log.
func (c *console) scan(r io.Reader, log io.Writer) {
	defer close(c.done)
	sc := bufio.NewScanner(io.TeeReader(r, log))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		l := strings.TrimRight(sc.Text(), "\r")
		c.mu.Lock()
		s := &c.seen
		s.lines = append(s.lines, l)
		if len(s.lines) > consoleTail {
			s.lines = s.lines[len(s.lines)-consoleTail:]
		}
		if _, m, ok := strings.Cut(l, "vmexec-init: "); ok {
			s.init = append(s.init, m)
		}
		if s.aliveAt.IsZero() && strings.Contains(l, "Linux version") {
			s.aliveAt = time.Now()
			close(c.alive)
		}
		if s.oopsAt == "" && oopsLine.MatchString(l) {
			s.oopsAt = strings.TrimSpace(timestamp.ReplaceAllString(l, ""))
		}
		if i := strings.Index(l, "Kernel panic - not syncing"); s.panicAt == "" && i >= 0 {
			s.panicAt = strings.TrimSpace(l[i:])
			close(c.panic)
		}
		c.mu.Unlock()
	}
	io.Copy(log, r) // a line over the buffer: keep the log whole
}

// hint names the likely cause of a boot under accel that failed with
// these console lines, or "": an empty console or no init (the console's
// last lines show the rest, a panic, an oops, the OOM killer).
func hint(lines []string, accel string) string {
	all := strings.Join(lines, "\n")
	switch {
	case len(lines) == 0 && accel == "kvm":
		return "KVM does not run this kernel on this host (nested and PVM hosts hang in the decompressor); try -accel auto or -accel tcg"
	case len(lines) == 0:
		return "the console stayed empty: the kernel never started (a wrong or corrupt image, a decompressor hang under this accelerator), or it lacks CONFIG_SERIAL_8250_CONSOLE"
	case strings.Contains(all, "VFS: "), strings.Contains(all, "No working init found"), strings.Contains(all, "Failed to execute"):
		return "the kernel did not run the initramfs's /init (CONFIG_BLK_DEV_INITRD=y, CONFIG_BINFMT_ELF=y; a bad rdinit= or init=?)"
	}
	return ""
}
