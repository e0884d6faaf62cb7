//go:build linux

package main

import (
	"fmt"
	"regexp"
	"time"

	"github.com/kbench/kbench/internal/vmflags"
)

// The progress guard: a frozen guest sends nothing at all, a slow one
// still sends its console, the binary's output or init's heartbeat; so a
// guest silent on both ports for -stall is killed as frozen
// (vmflags.ExitFroze), its vCPUs' RIPs named first. defaultStall is ten
// times the longest silence healthy boots showed
// (results/2026-12-03-vmexec.md).
const (
	beatEvery    = 5 * time.Second
	defaultStall = 2 * time.Minute
)

// beat sends init's heartbeat until the guest powers off.
func beat(fw *frameWriter) {
	for range time.Tick(beatEvery) {
		fw.write(frameBeat, nil)
	}
}

// ripRE finds each vCPU's instruction pointer in QEMU's `info registers -a`.
var ripRE = regexp.MustCompile(`(?m)^CPU#(\d+)[\s\S]*?\bRIP=([0-9a-f]{16})`)

// froze ends a boot whose guest sent nothing for -stall, saying where
// each vCPU was (docs/vms.md, "Failures", says how to name the RIPs).
func (b *boot) froze() bootResult {
	regs := "\nwhere the vCPUs were (QEMU's info registers -a):"
	if text, err := b.monitor("info registers -a"); err != nil {
		regs = "\nthe vCPUs' registers: unread (" + err.Error() + ")"
	} else if m := ripRE.FindAllStringSubmatch(text, -1); len(m) == 0 {
		regs = "\nthe vCPUs' registers: no RIP in QEMU's info registers"
	} else {
		for _, c := range m {
			regs += fmt.Sprintf("\n  vCPU%s RIP %s", c[1], c[2])
		}
	}
	return b.fail(vmflags.ExitFroze, "the guest sent no byte for -stall=%v (no console line, no output, no heartbeat from init): frozen; it was killed%s",
		b.h.cfg.stall, regs)
}
