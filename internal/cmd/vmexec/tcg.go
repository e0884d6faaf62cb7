//go:build linux

package main

// tcgAppendDefault is what -tcg-append adds to a TCG boot's command line:
// tsc=unstable, so that the guest never marks sched_clock stable, and
// no_timer_check, so that a slow timer interrupt does not panic it.
//
// tsc=unstable: under QEMU's multi-threaded TCG a guest that patches its own code
// while the other vCPU runs it can die. 6.12 keeps the TSC (5.10 and 6.1
// mark it unstable at SMP bring-up, "TSCs unsynchronized"), so about 3.4
// s into boot "sched_clock: Marking stable" enables a static key in
// sched_clock_cpu, which every CPU runs from its timer interrupt; the
// other vCPU then ran a stale translation of the int3 that text patching
// puts there for a moment, after the kernel had already replaced it ("Oops:
// int3 ... RIP: sched_clock_cpu", the code bytes at RIP showing the nop,
// "Kernel panic - not syncing: Fatal exception in interrupt"). With
// tsc=unstable the guest uses the HPET as 5.10 and 6.1 do and that key is
// never flipped.
//
// no_timer_check: at boot the kernel checks that the timer interrupt
// (IRQ0 through the IO-APIC) ticks while it waits about ten jiffies, and
// panics when it does not ("IO-APIC + timer doesn't work!"). A TCG vCPU
// that a loaded host runs late can miss that window though its timer
// works. no_timer_check skips the check, as cloud guests' command lines
// do.
//
// results/2026-12-01-tcg-boot-deaths.md and
// results/2026-12-02-tcg-boot-deaths.md have the death rates per kernel
// with and without them and the boot times. KVM boots keep their command line: the kernel runs
// the real CPU's code there.
const tcgAppendDefault = "tsc=unstable no_timer_check"

// tcgCmdline is what a boot under accel adds to the command line.
func (h *host) tcgCmdline(accel string) string {
	if accel != "tcg" || h.cfg.tcgAppend == "" {
		return ""
	}
	return " " + h.cfg.tcgAppend
}
