//go:build linux && !amd64

package thread

import "golang.org/x/sys/unix"

// RawSyscall6 is x/sys's where this package has no stub of its own.
func RawSyscall6(trap, a1, a2, a3, a4, a5, a6 uintptr) (r1, r2 uintptr, err unix.Errno) {
	return unix.RawSyscall6(trap, a1, a2, a3, a4, a5, a6)
}
