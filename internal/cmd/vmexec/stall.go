//go:build linux

package main

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kbench/kbench/internal/vmflags"
)

// The progress guard: a frozen guest sends nothing at all, a slow one
// still sends its console, the binary's output or init's heartbeat; so a
// guest silent on both ports for -stall is killed as frozen
// (vmflags.ExitFroze), its vCPUs' RIPs named first. defaultStall is ten
// times the longest silence healthy boots show (each console log ends
// with its own; results/2026-12-03-vmexec.md).
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

// froze ends a boot whose guest sent nothing for -stall.
func (b *boot) froze() bootResult {
	regs := b.registers()
	return b.fail(vmflags.ExitFroze, "the guest sent no byte for -stall=%v (no console line, no output, no heartbeat from init): frozen; it was killed%s",
		b.h.cfg.stall, regs)
}

// ripRE finds each vCPU's instruction pointer in QEMU's `info registers -a`.
var ripRE = regexp.MustCompile(`(?m)^CPU#(\d+)[\s\S]*?\bRIP=([0-9a-f]{16})`)

// registers reads where each vCPU is, for the failure message: "" when
// QEMU does not say.
func (b *boot) registers() string {
	var text string
	if err := qmpCall(b.h.qmpPath(), "human-monitor-command", map[string]string{"command-line": "info registers -a"}, &text); err != nil {
		return "\nthe vCPUs' registers: unread (" + err.Error() + ")"
	}
	m := ripRE.FindAllStringSubmatch(text, -1)
	if len(m) == 0 {
		return "\nthe vCPUs' registers: no RIP in QEMU's info registers"
	}
	syms, why := b.h.symbols()
	var s strings.Builder
	s.WriteString("\nwhere the vCPUs were (QEMU's info registers -a):")
	for _, c := range m {
		rip, _ := strconv.ParseUint(c[2], 16, 64)
		fmt.Fprintf(&s, "\n  vCPU%s RIP %s", c[1], c[2])
		if name := syms.name(rip); name != "" {
			s.WriteString(" " + name)
		}
	}
	if why != "" {
		s.WriteString("\n  (not named: " + why + ")")
	}
	return s.String()
}

// symbols reads the System.map beside the image, or says why there are
// none to use.
func (h *host) symbols() (symtab, string) {
	p := besideImage(h.real, "System.map-", "System.map")
	if p == "" {
		return nil, "no System.map beside " + h.cfg.kernel
	}
	// KASLR moves the kernel away from System.map's addresses; only the
	// decompressor randomizes, and a PVH boot has none.
	if h.image == h.cfg.kernel && !strings.Contains(" "+h.cfg.append+" ", " nokaslr ") {
		return nil, "a bzImage boot randomizes the kernel's base (KASLR): System.map's addresses hold with PVH or -append nokaslr"
	}
	syms, err := readSystemMap(p)
	if err != nil {
		return nil, err.Error()
	}
	if len(syms) == 0 {
		return nil, p + " holds no text symbol (Debian's is a placeholder: the real one is in the linux-image-*-dbg package)"
	}
	return syms, ""
}

// symtab is a System.map's text symbols, by address.
type symtab []sym

type sym struct {
	addr uint64
	name string
}

// readSystemMap reads "ADDRESS TYPE NAME" lines, keeping text symbols.
func readSystemMap(path string) (symtab, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var t symtab
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 3 || !strings.ContainsAny(fs[1], "tTwW") {
			continue
		}
		a, err := strconv.ParseUint(fs[0], 16, 64)
		if err != nil {
			continue
		}
		t = append(t, sym{a, fs[2]})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	sort.SliceStable(t, func(i, j int) bool { return t[i].addr < t[j].addr })
	return t, nil
}

// name is the symbol an address falls in, as "name+0xoff", or "".
func (t symtab) name(addr uint64) string {
	i := sort.Search(len(t), func(i int) bool { return t[i].addr > addr }) - 1
	if i < 0 || i == len(t)-1 && addr-t[i].addr > 1<<20 {
		return ""
	}
	return fmt.Sprintf("%s+%#x", t[i].name, addr-t[i].addr)
}
