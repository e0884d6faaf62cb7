//go:build linux

package main

import (
	"encoding/binary"
	"fmt"
	"io"
	"sync"
)

// Frames carry everything between the guest's init and vmexec over one
// raw serial port (ttyS1): a type byte, a little-endian uint32 length, the
// payload. The kernel console has its own port (ttyS0), so kernel
// messages never mix into the test binary's output.
const (
	frameHello  = 'H' // guest: init is running (payload: nothing)
	frameStdout = 'O' // guest: bytes the binary wrote to stdout
	frameStderr = 'E' // guest: bytes the binary wrote to stderr
	frameNote   = 'M' // guest: a message from init for the user (stderr)
	frameFile   = 'P' // guest: an output file follows (payload: its path)
	frameData   = 'D' // guest: the next bytes of that file
	frameExit   = 'X' // guest: the binary's end (JSON exitStatus)
	frameStart  = 'S' // host: facts known only after QEMU started (JSON []string lines); run the binary
	frameSignal = 'K' // host: deliver this signal (one byte) to the binary
)

// maxFrame bounds a payload, so a corrupt length cannot make the reader
// allocate without limit.
const maxFrame = 1 << 20

// exitStatus is how the guest's binary ended.
type exitStatus struct {
	Code   int    `json:"code"`   // exit code, when it exited
	Signal int    `json:"signal"` // the signal that killed it, else 0
	Err    string `json:"err"`    // init could not run it: why
}

type frameWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// write sends one frame; frames from several goroutines never interleave.
func (fw *frameWriter) write(typ byte, payload []byte) error {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	for len(payload) > maxFrame {
		if err := fw.writeLocked(typ, payload[:maxFrame]); err != nil {
			return err
		}
		payload = payload[maxFrame:]
	}
	return fw.writeLocked(typ, payload)
}

func (fw *frameWriter) writeLocked(typ byte, payload []byte) error {
	buf := make([]byte, 5+len(payload))
	buf[0] = typ
	binary.LittleEndian.PutUint32(buf[1:5], uint32(len(payload)))
	copy(buf[5:], payload)
	_, err := fw.w.Write(buf)
	return err
}

// readFrame reads one frame.
func readFrame(r io.Reader) (byte, []byte, error) {
	var hdr [5]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, nil, err
	}
	n := binary.LittleEndian.Uint32(hdr[1:])
	if n > maxFrame {
		return 0, nil, fmt.Errorf("frame of %d bytes (type %q): the serial stream is corrupt", n, hdr[0])
	}
	payload := make([]byte, n)
	if _, err := io.ReadFull(r, payload); err != nil {
		return 0, nil, fmt.Errorf("frame cut short: %w", err)
	}
	return hdr[0], payload, nil
}
