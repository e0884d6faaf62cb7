//go:build linux

package thread

import "golang.org/x/sys/unix"

// RawSyscall6 is the SYSCALL instruction alone, as a C library's stub
// (raw_amd64.s): x/sys's RawSyscall6 adds three functions, each a
// page to walk again on return where the kernel's exit flushes the TLB.
func RawSyscall6(trap, a1, a2, a3, a4, a5, a6 uintptr) (r1, r2 uintptr, err unix.Errno)
