//go:build linux

// Package vmflags holds the rules for the guest settings vmexec takes
// (-kernel, -append, -smp, -memory, -accel), its exit statuses and its
// -outcome records. kbab checks the settings it passes through by the
// same rules before it builds or boots anything (docs/vms.md). Each
// refused setting's error names the flag, what it accepts and the value.
package vmflags

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// vmexec's defaults and bounds.
const (
	DefaultSMP    = 2
	DefaultMemory = "2G"
	DefaultAccel  = "auto"
	MaxSMP        = 256
	minMemoryMiB  = 128 // the kernel, the initramfs and the test's own use
	// Reserved is what vmexec keeps of an x86 kernel's 2048-byte command
	// line (its NUL included) for OwnCmdline and -tcg-append; MaxAppend
	// is what -append may use of the rest.
	Reserved  = 256
	MaxAppend = 2048 - 1 - Reserved
)

// OwnCmdline starts every guest's kernel command line (docs/vms.md, "The
// kernel command line"); an -append that sets one of its keys again is
// refused, since the guest would then hang or never report.
const OwnCmdline = "console=ttyS0,115200 8250.nr_uarts=4 panic=-1 softlockup_panic=1 rdinit=/init"

// refused is the error for a refused setting: the flag (as vmexec names
// it; kbab renames its own), what it accepts, the value.
func refused(flag, accepts, got string) error {
	return errors.New(flag + " accepts " + accepts + " (got " + got + ")")
}

// OneOf checks that flag's value s is one of choices.
func OneOf(flag, s string, choices ...string) error {
	if slices.Contains(choices, s) {
		return nil
	}
	last := len(choices) - 1
	return refused(flag, strings.Join(choices[:last], ", ")+" or "+choices[last], strconv.Quote(s))
}

// Check checks the settings kbab passes through to vmexec; "" is vmexec's
// default. The first bad one is the error.
func Check(smp, memory, accel string) error {
	return cmp.Or(checkSMP(cmp.Or(smp, strconv.Itoa(DefaultSMP))), checkMemory(cmp.Or(memory, DefaultMemory)),
		OneOf("-accel", cmp.Or(accel, DefaultAccel), "auto", "kvm", "tcg"))
}

// checkSMP checks -smp: a number of vCPUs from 1 to MaxSMP.
func checkSMP(s string) error {
	if n, err := strconv.Atoi(s); err != nil || n < 1 || n > MaxSMP {
		return refused("-smp", fmt.Sprintf("1-%d vCPUs", MaxSMP), strconv.Quote(s))
	}
	return nil
}

var memoryRE = regexp.MustCompile(`^([1-9][0-9]{0,12})([MG])$`)

// checkMemory checks -memory, a size in M or G of at least minMemoryMiB. A
// bare number is refused: QEMU would read it as MiB, a reader as bytes.
func checkMemory(s string) error {
	m := memoryRE.FindStringSubmatch(s)
	if m == nil {
		return refused("-memory", fmt.Sprintf("a size in M or G (MiB, GiB) of at least %dM, such as 512M or 2G", minMemoryMiB), strconv.Quote(s))
	}
	if n, _ := strconv.Atoi(m[1]); m[2] == "M" && n < minMemoryMiB {
		return refused("-memory", fmt.Sprintf("at least %dM: a guest needs that much", minMemoryMiB), strconv.Quote(s))
	}
	return nil
}

// Append checks a piece of kernel command line given by flag: at most
// max bytes of printable text (a NUL would end it where QEMU copies it)
// that sets none of OwnCmdline's keys, compared as the kernel's parameq
// does ('-' is '_').
func Append(flag, s string, max int) error {
	if len(s) > max {
		return refused(flag, fmt.Sprintf("at most %d bytes, of the x86 kernel command line's 2048 that vmexec leaves", max), fmt.Sprintf("%d bytes", len(s)))
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' && c != '\t' || c == 0x7f {
			return refused(flag, "printable text: kernel parameters separated by spaces", fmt.Sprintf("control byte %#02x at byte %d of %q", c, i, s))
		}
	}
	key := func(p string) string { k, _, _ := strings.Cut(p, "="); return strings.ReplaceAll(k, "-", "_") }
	var keys []string
	for _, own := range params(OwnCmdline) {
		keys = append(keys, key(own))
	}
	for _, p := range params(s) {
		if i := slices.Index(keys, key(p)); i >= 0 {
			return refused(flag, "kernel parameters but vmexec's own ("+strings.Join(keys, ", ")+")",
				fmt.Sprintf("%q: vmexec sets %s itself", p, params(OwnCmdline)[i]))
		}
	}
	return nil
}

// params splits a command line into its parameters as the kernel's
// next_arg does: at spaces and tabs outside double quotes, quotes dropped
// (the even pieces between quotes are outside them; a NUL, which Append
// refuses first, marks a split).
func params(s string) []string {
	pieces := strings.Split(s, `"`)
	for i := 0; i < len(pieces); i += 2 {
		pieces[i] = strings.NewReplacer(" ", "\x00", "\t", "\x00").Replace(pieces[i])
	}
	return strings.FieldsFunc(strings.Join(pieces, ""), func(r rune) bool { return r == 0 })
}

// Kernel checks that path is an x86 boot image (a bzImage): the setup
// header's "HdrS" at 0x202 and boot protocol 2.00 or later (initramfs
// support). The error names flagName (kbab's -a-kernel, -b-kernel).
func Kernel(flagName, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%s: %v", flagName, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return cmp.Or(err, fmt.Errorf("%s %s: not a regular file", flagName, path))
	}
	var hdr [0x208]byte
	if n, err := io.ReadFull(f, hdr[:]); err != nil {
		return fmt.Errorf("%s %s: not a kernel image: %d bytes, too short for a bzImage header", flagName, path, n)
	}
	if !bytes.Equal(hdr[0x202:0x206], []byte("HdrS")) {
		return fmt.Errorf("%s %s: not a kernel image: no bzImage header (\"HdrS\" at 0x202); give arch/x86/boot/bzImage or /boot/vmlinuz-*, not vmlinux", flagName, path)
	}
	if v := binary.LittleEndian.Uint16(hdr[0x206:]); v < 0x0200 {
		return fmt.Errorf("%s %s: boot protocol %#x is older than 2.00 (no initramfs support)", flagName, path, v)
	}
	return nil
}

// ImageDigest is the SHA-256 of the kernel image at path, in hex: the one
// name of an image's contents (vmexec's vm.image line and caches, kbab's
// resume state).
func ImageDigest(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
