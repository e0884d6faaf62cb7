//go:build !linux

package internal

// kbench's benchmarks are Linux system calls, so nothing of it builds for
// another GOOS; this constant stops that build with the reason instead of
// a page of undefined names.
const _ = "kbench measures the Linux kernel and builds for GOOS=linux only" + 0
