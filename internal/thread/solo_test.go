//go:build linux

package thread

import (
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// readAt reads 8 bytes from fd into a buffer on its stack through Syscall,
// depth frames down a fresh goroutine's stack, so that some call lands
// where the stack must grow.
//
//go:noinline
func readAt(depth, fd int) byte {
	if depth > 0 {
		var pad [64]byte
		pad[0] = byte(depth)
		return readAt(depth-1, fd) + pad[0]*0
	}
	var buf [8]byte
	Syscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&buf[0])), 8)
	return buf[0]
}

// TestSyscallKeepsStackPointers checks that a stack buffer passed to
// Syscall as a uintptr is the one the kernel fills: were Syscall allowed
// to grow the stack (it is nosplit), the kernel would write into the old
// stack at some depths and the reads would be lost.
func TestSyscallKeepsStackPointers(t *testing.T) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	lost := 0
	for d := range 3000 {
		if _, err := unix.Write(p[1], []byte{1, 2, 3, 4, 5, 6, 7, 8}); err != nil {
			t.Fatal(err)
		}
		done := make(chan byte)
		go func() { done <- readAt(d, p[0]) }()
		if <-done != 1 {
			lost++
		}
	}
	if lost > 0 {
		t.Fatalf("%d of 3000 reads into a stack buffer were lost", lost)
	}
}
