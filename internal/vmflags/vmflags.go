//go:build linux

// Package vmflags holds the rules for the guest settings vmexec takes
// (-kernel, -append, -smp, -memory, -accel). vmexec checks its flags with
// them, and kbab, which passes the same settings through to vmexec, checks
// them before it builds anything or boots, so that a value vmexec would
// refuse stops kbab at once (exit 2) instead of failing the first boot.
//
// Each check's error is an *Error: the flag, what it accepts, the value.
package vmflags

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// Defaults: vmexec's, when a flag is not given.
const (
	DefaultSMP    = 2
	DefaultMemory = "2G"
	DefaultAccel  = "auto"
)

// MaxSMP is the most vCPUs vmexec gives a guest.
const MaxSMP = 256

// MinMemoryMiB is the least memory a guest boots with: the kernel, the
// initramfs (the test binary, its module's tree) and the test's own use.
const MinMemoryMiB = 128

// Reserved is how much of an x86 kernel's 2048 bytes of command line
// (COMMAND_LINE_SIZE, its NUL included; the kernel silently drops the
// rest) vmexec keeps for its own arguments: console, panic and init
// settings and, on a TCG boot, -tcg-append (about 100 bytes today).
const Reserved = 256

// MaxAppend is how long -append may be: what vmexec leaves of the 2048.
const MaxAppend = 2048 - 1 - Reserved

// OwnCmdline is the start of every guest's kernel command line, before
// the user's -append: the console on ttyS0 and the data port on ttyS1
// (8250.nr_uarts), panic=-1 and softlockup_panic=1 (as lkp boots its
// kernels), so that a guest that panics or whose CPUs are stuck in the
// kernel ends QEMU at once and vmexec reports its console instead of
// hanging, and vmexec itself as the initramfs's init. docs/vms.md says
// which guests made each of them needed. Its keys are vmexec's: a piece of
// command line that sets one again (the kernel takes the last value) is
// refused, since the guest would then hang or never report.
const OwnCmdline = "console=ttyS0,115200 8250.nr_uarts=4 panic=-1 softlockup_panic=1 rdinit=/init"

// Accels are the accelerators -accel accepts.
var Accels = []string{"auto", "kvm", "tcg"}

// An Error is a refused setting.
type Error struct {
	Flag    string // as vmexec names it: -smp; a caller may rename it (kbab's -b-append)
	Accepts string // what the flag accepts
	Got     string // the value refused, or what of it is wrong
}

func (e *Error) Error() string { return e.Flag + " accepts " + e.Accepts + " (got " + e.Got + ")" }

// Guest is the settings kbab passes through to vmexec, as given on the
// command line.
type Guest struct {
	SMP, Memory, Accel, Append string
}

// WithDefaults fills the settings left unset ("") with vmexec's defaults.
func (g Guest) WithDefaults() Guest {
	if g.SMP == "" {
		g.SMP = strconv.Itoa(DefaultSMP)
	}
	if g.Memory == "" {
		g.Memory = DefaultMemory
	}
	if g.Accel == "" {
		g.Accel = DefaultAccel
	}
	return g
}

// Check checks each setting; the first bad one is the error.
func (g Guest) Check() error {
	if _, err := SMP(g.SMP); err != nil {
		return err
	}
	if _, err := Memory(g.Memory); err != nil {
		return err
	}
	if err := Accel(g.Accel); err != nil {
		return err
	}
	return Append(g.Append)
}

// SMP parses -smp: a number of vCPUs from 1 to MaxSMP.
func SMP(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > MaxSMP {
		return 0, &Error{"-smp", fmt.Sprintf("1-%d vCPUs", MaxSMP), strconv.Quote(s)}
	}
	return n, nil
}

var memoryRE = regexp.MustCompile(`^([1-9][0-9]*)([MG])$`)

// Memory parses -memory, a size with an M or G suffix (MiB or GiB) of at
// least MinMemoryMiB, and returns it in MiB. A size without a suffix is
// refused: QEMU would read it as MiB, a reader as bytes.
func Memory(s string) (int64, error) {
	accepts := &Error{"-memory", fmt.Sprintf("a size in M or G (MiB, GiB) of at least %dM, such as 512M or 2G", MinMemoryMiB), strconv.Quote(s)}
	m := memoryRE.FindStringSubmatch(s)
	if m == nil {
		return 0, accepts
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil || m[2] == "G" && n > (1<<62)/1024 {
		return 0, accepts
	}
	if m[2] == "G" {
		n *= 1024
	}
	if n < MinMemoryMiB {
		return 0, &Error{"-memory", fmt.Sprintf("at least %dM: a guest needs that much", MinMemoryMiB), strconv.Quote(s)}
	}
	return n, nil
}

// Accel checks -accel.
func Accel(s string) error {
	for _, a := range Accels {
		if s == a {
			return nil
		}
	}
	return &Error{"-accel", strings.Join(Accels[:len(Accels)-1], ", ") + " or " + Accels[len(Accels)-1], strconv.Quote(s)}
}

// Append checks -append: at most MaxAppend bytes of printable text (a NUL
// would end the command line where QEMU copies it; other control bytes
// reach no parameter intact).
func Append(s string) error { return AppendAs("-append", s, MaxAppend) }

// AppendAs checks a piece of kernel command line given by flag name: at
// most max bytes of printable text, as Append, that sets none of
// OwnCmdline's keys.
func AppendAs(name, s string, max int) error {
	if len(s) > max {
		return &Error{name, fmt.Sprintf("at most %d bytes, of the x86 kernel command line's 2048 that vmexec leaves", max), fmt.Sprintf("%d bytes", len(s))}
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' && c != '\t' || c == 0x7f {
			return &Error{name, "printable text: kernel parameters separated by spaces", fmt.Sprintf("control byte %#02x at byte %d of %q", c, i, s)}
		}
	}
	for _, p := range params(s) {
		key, _, _ := strings.Cut(p, "=")
		for _, own := range params(OwnCmdline) {
			if ownKey, _, _ := strings.Cut(own, "="); paramKey(key) == paramKey(ownKey) {
				return &Error{name, "kernel parameters but vmexec's own (" + strings.Join(ownKeys(), ", ") + ")",
					fmt.Sprintf("%q: vmexec sets %s itself", p, own)}
			}
		}
	}
	return nil
}

// params splits a command line into its parameters as the kernel's
// next_arg does: at spaces and tabs outside double quotes, the quotes
// dropped.
func params(s string) []string {
	var out []string
	var cur strings.Builder
	quoted, in := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			quoted, in = !quoted, true
		case (c == ' ' || c == '\t') && !quoted:
			if in {
				out = append(out, cur.String())
				cur.Reset()
			}
			in = false
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

// paramKey is a parameter's name as the kernel compares names: '-' and
// '_' are the same character (parameq).
func paramKey(k string) string { return strings.ReplaceAll(k, "-", "_") }

// ownKeys are OwnCmdline's keys, in its order.
func ownKeys() []string {
	var keys []string
	for _, p := range params(OwnCmdline) {
		k, _, _ := strings.Cut(p, "=")
		keys = append(keys, k)
	}
	return keys
}

// Kernel checks that path is an x86 boot image (a bzImage): a regular
// file with the setup header's "HdrS" magic at 0x202 and a boot protocol
// of 2.00 or later, which can take an initramfs. The error's flag is
// flagName (-kernel for vmexec; kbab's -a-kernel and -b-kernel).
func Kernel(flagName, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%s: %v", flagName, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("%s: %v", flagName, err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s %s: not a regular file", flagName, path)
	}
	var hdr [0x208]byte
	if _, err := io.ReadFull(f, hdr[:]); err != nil {
		return fmt.Errorf("%s %s: not a kernel image: %d bytes, too short for a bzImage header", flagName, path, fi.Size())
	}
	if !bytes.Equal(hdr[0x202:0x206], []byte("HdrS")) {
		return fmt.Errorf("%s %s: not a kernel image: no bzImage header (\"HdrS\" at 0x202); give arch/x86/boot/bzImage or /boot/vmlinuz-*, not vmlinux", flagName, path)
	}
	if v := binary.LittleEndian.Uint16(hdr[0x206:]); v < 0x0200 {
		return fmt.Errorf("%s %s: boot protocol %#x is older than 2.00 (no initramfs support)", flagName, path, v)
	}
	return nil
}

// ImageDigest is the SHA-256 of the kernel image at path, in lower-case
// hex: the one name of an image's contents, which vmexec's fingerprint
// line (vm.image), its -accel auto cache and its PVH vmlinux cache are
// keyed by, and which kbab's resume state records for each kernel. A
// path that is not a regular file has none.
func ImageDigest(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return "", err
	} else if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", path)
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
