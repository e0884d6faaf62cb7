//go:build linux

package main

import (
	"bufio"
	"io"
	"regexp"
	"strings"
	"sync"
	"time"
)

// consoleTail is how many console lines a failure report shows.
const consoleTail = 25

// console reads the kernel console (ttyS0), copies it to the log, keeps
// its last lines and reports what the host must react to.
type console struct {
	mu      sync.Mutex
	lines   []string      // the last consoleTail lines
	init    []string      // the guest init's own messages (vmexec-init: ...)
	alive   chan struct{} // closed at the kernel's first line ("Linux version")
	aliveAt time.Time     // when that line came
	panic   chan struct{} // closed at the first panic line
	panicAt string        // that line, from "Kernel panic" on
	oopsAt  string        // the kernel's first oops line (oopsLine), "" for none
	done    chan struct{} // closed at EOF
}

func newConsole() *console {
	return &console{alive: make(chan struct{}), panic: make(chan struct{}), done: make(chan struct{})}
}

// scan reads r until EOF, copying it to log.
func (c *console) scan(r io.Reader, log io.Writer) {
	defer close(c.done)
	sc := bufio.NewScanner(io.TeeReader(r, log))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	aliveSeen, panicSeen := false, false
	for sc.Scan() {
		l := strings.TrimRight(sc.Text(), "\r")
		c.mu.Lock()
		c.lines = append(c.lines, l)
		if len(c.lines) > consoleTail {
			c.lines = c.lines[len(c.lines)-consoleTail:]
		}
		if i := strings.Index(l, "vmexec-init: "); i >= 0 {
			c.init = append(c.init, l[i+len("vmexec-init: "):])
		}
		c.mu.Unlock()
		if !aliveSeen && strings.Contains(l, "Linux version") {
			aliveSeen = true
			c.mu.Lock()
			c.aliveAt = time.Now()
			c.mu.Unlock()
			close(c.alive)
		}
		if oopsLine.MatchString(l) {
			c.mu.Lock()
			if c.oopsAt == "" {
				c.oopsAt = strings.TrimSpace(timestamp.ReplaceAllString(l, ""))
			}
			c.mu.Unlock()
		}
		if i := strings.Index(l, "Kernel panic - not syncing"); !panicSeen && i >= 0 {
			panicSeen = true
			c.mu.Lock()
			c.panicAt = strings.TrimSpace(l[i:])
			c.mu.Unlock()
			close(c.panic)
		}
	}
	io.Copy(log, r) // a line over the buffer: keep the log whole
}

// firstLine is when the kernel's first line came (zero: not yet).
func (c *console) firstLine() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.aliveAt
}

// oopsLine matches the line the kernel's die() prints for an oops,
// "TYPE: ERRORCODE [#N]": "Oops: 0002 [#1] PREEMPT SMP", "int3: 0000
// [#1]", "general protection fault, probably for non-canonical address
// ...: 0000 [#1]"; the console's timestamp is left out.
var (
	oopsLine  = regexp.MustCompile(`: [0-9a-f]{4} \[#[0-9]+\]`)
	timestamp = regexp.MustCompile(`^\[ *[0-9]+\.[0-9]+\] `)
)

// oops is the kernel's first oops line ("": none so far).
func (c *console) oops() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.oopsAt
}

// panicLine is the kernel's first panic line ("": none so far).
func (c *console) panicLine() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.panicAt
}

func (c *console) tail() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.lines...)
}

func (c *console) initMessages() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.init...)
}

// hint names the likely cause of a boot that failed with these console
// lines, or "".
func hint(lines []string) string {
	all := strings.Join(lines, "\n")
	switch {
	case len(lines) == 0:
		return "the console stayed empty: the kernel never started (a wrong or corrupt image, a decompressor hang under this accelerator), or it lacks CONFIG_SERIAL_8250_CONSOLE"
	case strings.Contains(all, "VFS: Unable to mount root fs"), strings.Contains(all, "VFS: Cannot open root device"):
		return "the kernel did not run the initramfs's /init (CONFIG_BLK_DEV_INITRD=y, CONFIG_BINFMT_ELF=y; a bad rdinit= or init=?)"
	case strings.Contains(all, "No working init found"), strings.Contains(all, "Failed to execute"):
		return "the kernel could not execute the init (a bad rdinit= or init=, or CONFIG_BINFMT_ELF)"
	case strings.Contains(all, "Out of memory"), strings.Contains(all, "out of memory"):
		return "the guest ran out of memory: raise -memory"
	}
	return ""
}
