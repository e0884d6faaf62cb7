//go:build linux

package thread

import (
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// readAt reads 8 bytes from fd into a buffer on its stack through Syscall6,
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
	Syscall6(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&buf[0])), 8, 0, 0, 0)
	return buf[0]
}

// TestSyscallKeepsStackPointers checks that a stack buffer passed to
// Syscall6 as a uintptr is the one the kernel fills: were Syscall6 allowed
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

// TestRawSyscall6 checks the stub's results and its errno: getpid's
// answer, and close(-1)'s EBADF with r1 -1, as x/sys's RawSyscall6 gives.
func TestRawSyscall6(t *testing.T) {
	if r, _, e := RawSyscall6(unix.SYS_GETPID, 0, 0, 0, 0, 0, 0); e != 0 || int(r) != unix.Getpid() {
		t.Errorf("getpid: %d, %v; want %d, 0", r, e, unix.Getpid())
	}
	r, _, e := RawSyscall6(unix.SYS_CLOSE, ^uintptr(0), 0, 0, 0, 0, 0)
	wr, _, we := unix.RawSyscall6(unix.SYS_CLOSE, ^uintptr(0), 0, 0, 0, 0, 0)
	if e != unix.EBADF || r != wr || e != we {
		t.Errorf("close(-1): %#x, %v; x/sys's: %#x, %v; want EBADF", r, e, wr, we)
	}
}

// TestMayLeaveIdle checks the probe against the kernel's rule
// (sched_setscheduler(2): CAP_SYS_NICE, or a nice value RLIMIT_NICE
// allows) and that it leaves the calling thread's policy as it was.
func TestMayLeaveIdle(t *testing.T) {
	before, err := unix.SchedGetAttr(0, 0)
	if err != nil {
		t.Skipf("sched_getattr: %v", err)
	}
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NICE, &lim); err != nil {
		t.Fatal(err)
	}
	nice, err := unix.Getpriority(unix.PRIO_PROCESS, 0)
	if err != nil {
		t.Fatal(err)
	}
	// getpriority(2) returns 20 - nice; the rule asks 20 - nice <= RLIMIT_NICE.
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		t.Fatal(err)
	}
	capNice := data[0].Effective&(1<<unix.CAP_SYS_NICE) != 0
	want := capNice || uint64(nice) <= lim.Cur
	if got := MayLeaveIdle(); got != want {
		t.Errorf("MayLeaveIdle() = %v, want %v (CAP_SYS_NICE %v, 20-nice %d, RLIMIT_NICE %d)", got, want, capNice, nice, lim.Cur)
	}
	if after, err := unix.SchedGetAttr(0, 0); err != nil || after.Policy != before.Policy {
		t.Errorf("the calling thread's policy went from %d to %v (%v)", before.Policy, after, err)
	}
}
