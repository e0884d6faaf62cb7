//go:build linux

package main

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
)

// pvhKernel returns the vmlinux inside a bzImage whose SHA-256 is sum,
// when it has a PVH entry (docs/vms.md, "PVH entry"), extracting it into
// dir the first time (only a vmlinux with the entry is kept there); an
// error says why there is none.
func pvhKernel(image, sum, dir string) (string, error) {
	out := filepath.Join(dir, "vmlinux-"+sum[:24])
	if exists(out) {
		return out, nil
	}
	data, err := os.ReadFile(image)
	if err != nil {
		return "", err
	}
	vmlinux, err := extractVmlinux(data)
	if err != nil {
		return "", err
	}
	if f, err := elf.NewFile(bytes.NewReader(vmlinux)); err != nil || !hasPVHEntry(f) {
		return "", cmp.Or(err, errors.New("the kernel has no PVH entry (CONFIG_PVH)"))
	}
	// Written whole, then renamed: a run beside this one reads the
	// finished file or none.
	tmp := fmt.Sprintf("%s.%d.tmp", out, os.Getpid())
	defer os.Remove(tmp)
	if err := cmp.Or(os.MkdirAll(dir, 0o755), os.WriteFile(tmp, vmlinux, 0o644)); err != nil {
		return "", err
	}
	return out, os.Rename(tmp, out)
}

// extractVmlinux decompresses a bzImage's payload (boot protocol 2.08+:
// payload_offset and payload_length after the protected-mode code).
func extractVmlinux(bz []byte) ([]byte, error) {
	if len(bz) < 0x250 || binary.LittleEndian.Uint16(bz[0x206:]) < 0x0208 {
		return nil, errors.New("boot protocol before 2.08 names no payload")
	}
	setupSects := int(bz[0x1f1])
	if setupSects == 0 {
		setupSects = 4
	}
	start := (setupSects+1)*512 + int(binary.LittleEndian.Uint32(bz[0x248:]))
	end := start + int(binary.LittleEndian.Uint32(bz[0x24c:]))
	if start >= end || end > len(bz) {
		return nil, fmt.Errorf("payload %d-%d outside the image's %d bytes", start, end, len(bz))
	}
	payload := bz[start:end]
	switch {
	case bytes.HasPrefix(payload, []byte{0x1f, 0x8b}):
		r, err := gzip.NewReader(bytes.NewReader(payload))
		if err != nil {
			return nil, err
		}
		return io.ReadAll(r)
	case bytes.HasPrefix(payload, []byte("\xfd7zXZ\x00")):
		// The kernel's xz streams use the x86 BCJ filter; xz(1) has it.
		cmd := exec.Command("xz", "-dc", "--single-stream")
		cmd.Stdin = bytes.NewReader(payload)
		out, err := cmd.Output()
		if err != nil {
			err = fmt.Errorf("xz -dc --single-stream: %v", err)
		}
		return out, err
	}
	return nil, fmt.Errorf("payload compressed with a format vmexec does not unpack (magic % x)", payload[:min(6, len(payload))])
}

// hasPVHEntry reports whether an ELF file carries the PVH entry note: a
// note's type XEN_ELFNOTE_PHYS32_ENTRY (18) followed by its name "Xen".
func hasPVHEntry(f *elf.File) bool {
	for _, prog := range f.Progs {
		if prog.Type != elf.PT_NOTE {
			continue
		}
		if notes, err := io.ReadAll(prog.Open()); err == nil && bytes.Contains(notes, []byte("\x12\x00\x00\x00Xen\x00")) {
			return true
		}
	}
	return false
}
