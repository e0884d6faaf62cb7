//go:build linux

package redisserver

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// sysProcAttr puts the server in its own process group (so a terminal's
// Ctrl-C reaches only the test binary, which stops the server in order) and
// has the kernel SIGKILL it when the forking thread dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

var signalsOnce sync.Once

// handleSignals stops every live server on SIGINT, SIGTERM or SIGHUP, then
// lets the signal kill the process as it would have without the handler.
func handleSignals() {
	signalsOnce.Do(func() {
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
		go func() {
			sig := <-ch
			StopAll()
			signal.Reset(sig)
			syscall.Kill(os.Getpid(), sig.(syscall.Signal))
		}()
	})
}
