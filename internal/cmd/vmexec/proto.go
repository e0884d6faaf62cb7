//go:build linux

package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"syscall"
)

// Frames carry everything between the guest's init and vmexec over the
// raw serial port ttyS1 (docs/vms.md, "Console and data"): a type byte, a
// little-endian uint32 length, the payload.
const (
	frameHello  = 'H' // guest: init is running (payload: nothing)
	frameStdout = 'O' // guest: bytes the binary wrote to stdout
	frameStderr = 'E' // guest: bytes the binary wrote to stderr
	frameNote   = 'M' // guest: a message from init for the user (stderr)
	frameFile   = 'P' // guest: an output file follows (payload: its path)
	frameData   = 'D' // guest: the next bytes of that file
	frameExit   = 'X' // guest: the binary's end (JSON exitStatus)
	frameBeat   = 'B' // guest: init's heartbeat, every beatEvery (payload: nothing)
	frameStart  = 'S' // host: fingerprint lines known only after QEMU started; run the binary
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

func (st *exitStatus) String() string {
	switch {
	case st.Err != "":
		return "without running: " + st.Err
	case st.Signal != 0:
		return "by signal " + syscall.Signal(st.Signal).String()
	}
	return fmt.Sprintf("with exit status %d", st.Code)
}

// frame is one frame read, with where it began in its stream.
type frame struct {
	typ     byte
	payload []byte
	off     int64
}

type frameWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// write sends one frame, or several of a payload over maxFrame; frames
// from several goroutines never interleave.
func (fw *frameWriter) write(typ byte, payload []byte) error {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	for first := true; first || len(payload) > 0; first = false {
		n := min(len(payload), maxFrame)
		buf := binary.LittleEndian.AppendUint32([]byte{typ}, uint32(n))
		if _, err := fw.w.Write(append(buf, payload[:n]...)); err != nil {
			return err
		}
		payload = payload[n:]
	}
	return nil
}

// frameReader reads one side's frames and counts the bytes, so that an
// error says where in the stream it went wrong and what was expected.
type frameReader struct {
	r      io.Reader
	from   string // whose stream, for errors: "the guest's data port"
	accept string // the frame types that side sends
	off    int64  // bytes read so far
}

// The readers of each side's frames: the types that side sends.
func newGuestReader(r io.Reader) *frameReader {
	return &frameReader{r: r, from: fromGuest, accept: "HOEMPDXB"}
}
func newHostReader(r io.Reader) *frameReader { return &frameReader{r: r, from: fromHost, accept: "S"} }

const fromGuest, fromHost = "the guest's data port", "the host's data port"

// next reads one frame. The stream ending between two frames is io.EOF;
// any other error names the byte offset of the frame and what was wrong
// (wrapping the read error, if one caused it).
func (fr *frameReader) next() (frame, error) {
	start := fr.off
	var hdr [5]byte
	n, err := io.ReadFull(fr.r, hdr[:])
	fr.off += int64(n)
	switch {
	case err == io.EOF:
		return frame{}, io.EOF
	case n == 0:
		return frame{}, fmt.Errorf("%s, byte %d: %w", fr.from, start, err)
	case err != nil:
		return frame{}, fmt.Errorf("%s, byte %d: a frame header cut short after %d of its 5 bytes: %w", fr.from, start, n, err)
	}
	f := frame{typ: hdr[0], off: start}
	if !strings.ContainsRune(fr.accept, rune(f.typ)) {
		return f, fmt.Errorf("%s, byte %d: frame type %q, want one of %q: the stream is corrupt", fr.from, start, f.typ, fr.accept)
	}
	size := binary.LittleEndian.Uint32(hdr[1:])
	if size > maxFrame {
		return f, fmt.Errorf("%s, byte %d: a %q frame of %d bytes, more than the %d a frame holds: the stream is corrupt", fr.from, start, f.typ, size, maxFrame)
	}
	f.payload = make([]byte, size)
	n, err = io.ReadFull(fr.r, f.payload)
	fr.off += int64(n)
	if err != nil {
		if err == io.ErrUnexpectedEOF || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return f, fmt.Errorf("%s, byte %d: a %q frame cut short after %d of its %d bytes: %w", fr.from, start, f.typ, n, size, err)
	}
	return f, nil
}

// errorAt is a frame's payload that is not what its type holds.
func (f frame) errorAt(from, want string, err error) error {
	s := fmt.Sprintf("%s, byte %d: %q frame %.80q: want %s", from, f.off, f.typ, f.payload, want)
	if err != nil {
		s += ": " + err.Error()
	}
	return errors.New(s)
}

// decodeExit reads an exit frame, one JSON object: the binary exited
// with a code (0-255), or a signal (1-64) killed it, or init could not
// run it.
func decodeExit(f frame) (*exitStatus, error) {
	st := &exitStatus{}
	err := json.Unmarshal(f.payload, st)
	switch {
	case !bytes.HasPrefix(bytes.TrimLeft(f.payload, " \t\r\n"), []byte("{")):
		err = errors.New("not a JSON object")
	case err != nil:
	case st.Code < 0 || st.Code > 255:
		err = fmt.Errorf("code %d", st.Code)
	case st.Signal < 0 || st.Signal > 64:
		err = fmt.Errorf("signal %d", st.Signal)
	case st.Signal != 0 && st.Code != 0:
		err = errors.New("both a code and a signal")
	}
	if err != nil {
		return nil, f.errorAt(fromGuest, `{"code":0-255,"signal":0-64,"err":"why init could not run it"}`, err)
	}
	return st, nil
}
