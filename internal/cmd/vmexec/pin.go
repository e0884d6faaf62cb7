//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/kbench/kbench/internal/cpus"
	"github.com/kbench/kbench/internal/fingerprint"
	"golang.org/x/sys/unix"
)

// pin binds vCPU i's thread to the i-th CPU vmexec may run on (ktstr's
// performance mode), when there are at least as many CPUs as vCPUs, and
// says what it did for the fingerprint.
func (h *host) pin() string {
	if h.cfg.pin == "off" {
		return "not pinned (-pin off)"
	}
	allowed, err := cpus.Usable()
	if err != nil {
		return "not pinned (" + err.Error() + ")"
	}
	if len(allowed) < h.cfg.smp {
		return fmt.Sprintf("not pinned (%d vCPUs, %d host CPUs allowed: %s)", h.cfg.smp, len(allowed), fingerprint.FormatCPUList(allowed))
	}
	tids, err := vcpuThreads(h.qmpPath())
	if err != nil {
		return "not pinned (QMP query-cpus-fast: " + err.Error() + ")"
	}
	if len(tids) != h.cfg.smp {
		return fmt.Sprintf("not pinned (QMP listed %d vCPU threads for %d vCPUs)", len(tids), h.cfg.smp)
	}
	var parts []string
	for i, tid := range tids {
		var one unix.CPUSet
		one.Set(allowed[i])
		if err := unix.SchedSetaffinity(tid, &one); err != nil {
			return fmt.Sprintf("not pinned (sched_setaffinity of vCPU %d's thread %d: %v)", i, tid, err)
		}
		parts = append(parts, fmt.Sprintf("vCPU%d->CPU%d", i, allowed[i]))
	}
	return strings.Join(parts, " ") + " (QEMU's other threads unpinned)"
}

// vcpuThreads asks QEMU's QMP socket for the host thread of each vCPU,
// in vCPU order.
func vcpuThreads(sock string) ([]int, error) {
	var cpus []struct {
		Index  int `json:"cpu-index"`
		Thread int `json:"thread-id"`
	}
	if err := qmpCall(sock, "query-cpus-fast", nil, &cpus); err != nil {
		return nil, err
	}
	tids := make([]int, len(cpus))
	for _, c := range cpus {
		if c.Index < 0 || c.Index >= len(cpus) {
			return nil, fmt.Errorf("vCPU index %d out of range", c.Index)
		}
		tids[c.Index] = c.Thread
	}
	return tids, nil
}

// qmpCall runs one QMP command (with args, when not nil) on QEMU's
// socket and decodes its return value into ret.
func qmpCall(sock, cmd string, args, ret any) error {
	// QEMU made the socket at its start, before the guest ran.
	c, err := net.DialTimeout("unix", sock, 5*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	dec, enc := json.NewDecoder(c), json.NewEncoder(c)
	var greeting, none any
	if err := dec.Decode(&greeting); err != nil {
		return err
	}
	for _, q := range []struct {
		Execute   string `json:"execute"`
		Arguments any    `json:"arguments,omitempty"`
		ret       any
	}{{"qmp_capabilities", nil, &none}, {cmd, args, ret}} {
		if err := enc.Encode(q); err != nil {
			return err
		}
		for { // events come before the answer
			var msg struct {
				Return json.RawMessage
				Error  *struct{ Desc string }
			}
			if err := dec.Decode(&msg); err != nil {
				return err
			}
			if msg.Error != nil {
				return fmt.Errorf("%s: %s", q.Execute, msg.Error.Desc)
			}
			if msg.Return != nil {
				if err := json.Unmarshal(msg.Return, q.ret); err != nil {
					return err
				}
				break
			}
		}
	}
	return nil
}
