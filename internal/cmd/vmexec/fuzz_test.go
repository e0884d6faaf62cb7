//go:build linux

package main

// Fuzz targets for what vmexec reads from the guest and the guest from
// vmexec: the frames on the data port, both ways, and the kernel console.
// Each input either reads whole or stops with an error that names the
// byte where the stream went wrong and what was expected there.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// fuzzOutputs is where FuzzGuestStream's guest may write files: the seeds
// name it, so it is the same path in every fuzzing process.
var fuzzOutputs = filepath.Join(os.TempDir(), "vmexec-fuzz-outputs")

// guestSeeds are data port streams as the guest's init sends them: its
// own encoders (frameOut, sendOutputs, the exit frame) run on a real
// benchmark log and a real profile.
func guestSeeds(f *testing.F) [][]byte {
	logText, err := os.ReadFile("../../../lkp/spec/fixtures/stats/kbench/01")
	if err != nil {
		f.Fatal(err)
	}
	var out bytes.Buffer
	fw := &frameWriter{w: &out}
	fw.write(frameHello, nil)
	for b := bytes.NewBuffer(logText); b.Len() > 0; {
		frameOut{fw, frameStdout}.Write(b.Next(32 * 1024)) // as exec.Cmd copies a pipe
	}
	fw.write(frameNote, []byte("guest kept its own rlimits where the host's were refused: RLIMIT_NOFILE 1048576/1048576: operation not permitted"))
	os.MkdirAll(fuzzOutputs, 0o755)
	prof := filepath.Join(fuzzOutputs, "row.pprof")
	os.WriteFile(prof, logText[:2000], 0o644)
	sendOutputs(fw, []string{prof})
	st, _ := json.Marshal(exitStatus{Code: 1})
	fw.write(frameExit, st)
	whole := out.Bytes()
	return [][]byte{whole, whole[:len(whole)/2], whole[:3]}
}

// A frame reading error: where, then what.
var streamError = regexp.MustCompile(`^the (guest|host)'s data port, byte (\d+): `)

// readAll reads a stream's frames to its end, checking that it stops at
// the end of a frame or says where the stream went wrong.
func readAll(t *testing.T, fr *frameReader, b []byte) []frame {
	var frames []frame
	var end int64
	for {
		f, err := fr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			m := streamError.FindStringSubmatch(err.Error())
			if m == nil {
				t.Fatalf("error %q does not say where", err)
			}
			if off, _ := strconv.ParseInt(m[2], 10, 64); off != end {
				t.Fatalf("error at byte %s, but the bad frame begins at byte %d: %v", m[2], end, err)
			}
			return frames
		}
		if f.off != end || !strings.ContainsRune(fr.accept, rune(f.typ)) || len(f.payload) > maxFrame {
			t.Fatalf("frame %q of %d bytes at %d, want one of %q at %d", f.typ, len(f.payload), f.off, fr.accept, end)
		}
		end += 5 + int64(len(f.payload))
		frames = append(frames, f)
	}
	// A stream read whole is its frames, written again.
	var again bytes.Buffer
	fw := &frameWriter{w: &again}
	for _, f := range frames {
		fw.write(f.typ, f.payload)
	}
	if !bytes.Equal(again.Bytes(), b) {
		t.Fatalf("read whole, but its %d frames make %d bytes of %d", len(frames), again.Len(), len(b))
	}
	return frames
}

// Any bytes from the guest: vmexec copies what it may, writes files only
// at the binary's outputs, and passes on hello and exit frames, whose
// payloads it checks.
func FuzzGuestStream(f *testing.F) {
	for _, s := range guestSeeds(f) {
		f.Add(s)
	}
	f.Cleanup(func() { os.RemoveAll(fuzzOutputs) })
	f.Fuzz(func(t *testing.T, b []byte) {
		readAll(t, newGuestReader(bytes.NewReader(b)), b)
		os.RemoveAll(fuzzOutputs) // what an input before wrote
		var stdout, stderr bytes.Buffer
		h := &host{runEnv: runEnv{stdout: &stdout, stderr: &stderr}, outputs: []string{fuzzOutputs}}
		var passed []frame
		err := h.readGuest(bytes.NewReader(b), func(f frame) { passed = append(passed, f) })
		if err != io.EOF && !streamError.MatchString(err.Error()) {
			t.Fatalf("readGuest: %v", err)
		}
		for _, f := range passed {
			switch f.typ {
			case frameExit:
				if _, err := decodeExit(f); err != nil && !strings.HasPrefix(err.Error(), fmt.Sprintf("the guest's data port, byte %d: 'X' frame", f.off)) {
					t.Fatalf("exit frame: %v", err)
				}
			case frameHello:
			default:
				t.Fatalf("frame %q passed on", f.typ)
			}
		}
		// Only the outputs are written.
		fr := newGuestReader(bytes.NewReader(b))
		for {
			f, err := fr.next()
			if err != nil {
				break
			}
			if p := filepath.Clean(string(f.payload)); f.typ == frameFile && h.isOutput(p) && !strings.HasPrefix(p+"/", fuzzOutputs+"/") {
				t.Fatalf("%q would be written, outside %s", f.payload, fuzzOutputs)
			}
		}
	})
}

// Any bytes from the host: the guest reads its start frame (whose
// payload, vmexec's own fingerprint lines, it appends as they are).
func FuzzHostStream(f *testing.F) {
	var out bytes.Buffer
	fw := &frameWriter{w: &out}
	// The late facts of a real boot (kbab's seccompbench on Debian's 6.1
	// under TCG, 2026-12-01), as its fingerprint printed them.
	fw.write(frameStart, []byte(strings.Join([]string{
		"vm.accel: tcg (KVM did not boot this kernel (QEMU ended (signal: aborted): qemu-system-x86_64: ../../target/i386/kvm/kvm.c:3183: kvm_buf_set_msrs: Assertion `ret == cpu->kvm_msr_buf->nmsrs' failed.); TCG measures emulation, not hardware), -cpu max",
		"vm.boot: init ran 45.841s after QEMU started (the kernel's first console line at 11.235s)",
		"vm.pinning: vCPU0->CPU0 vCPU1->CPU1 (QEMU's other threads unpinned)",
	}, "\n")))
	f.Add(out.Bytes())
	f.Add(out.Bytes()[:20])
	f.Fuzz(func(t *testing.T, b []byte) {
		readAll(t, newHostReader(bytes.NewReader(b)), b)
	})
}

// Any bytes on the console: the log is a copy, the tail its last lines,
// and the first line, the panic and init's messages are what the lines
// say.
func FuzzConsole(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/console-*.log")
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("[    0.0] Linux version 6.1\r\n[    2.0] Kernel panic - not syncing: x\r\nvmexec-init: y"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) >= 1<<20 {
			t.Skip("a line may be longer than the scanner's 1 MiB; the log keeps it, the tail does not")
		}
		c := newConsole()
		var log bytes.Buffer
		c.scan(bytes.NewReader(b), &log)
		if !bytes.Equal(log.Bytes(), b) {
			t.Fatalf("the log is %d bytes of the console's %d", log.Len(), len(b))
		}
		lines := strings.Split(string(b), "\n")
		if lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		var alive bool
		var panicLine string
		var inits int
		for i, l := range lines {
			l = strings.TrimRight(l, "\r")
			lines[i] = l
			alive = alive || strings.Contains(l, "Linux version")
			if j := strings.Index(l, "Kernel panic - not syncing"); j >= 0 && panicLine == "" {
				panicLine = strings.TrimSpace(l[j:])
			}
			if strings.Contains(l, "vmexec-init: ") {
				inits++
			}
		}
		tail := lines[max(0, len(lines)-consoleTail):]
		if got := c.state().lines; strings.Join(got, "\n") != strings.Join(tail, "\n") {
			t.Fatalf("tail %q, want %q", got, tail)
		}
		select {
		case <-c.alive:
			if !alive {
				t.Fatal("alive without a Linux version line")
			}
		default:
			if alive {
				t.Fatal("a Linux version line, not alive")
			}
		}
		if c.state().panicAt != panicLine || len(c.state().init) != inits {
			t.Fatalf("panic %q, %d init messages; want %q, %d", c.state().panicAt, len(c.state().init), panicLine, inits)
		}
	})
}
