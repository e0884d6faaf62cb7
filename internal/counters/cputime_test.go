package counters

import (
	"os/exec"
	"testing"
	"time"
)

// TestCPUTimeCountsChildren: task-clock includes a child process that runs
// through the region (as redis-server does) and one reaped within it.
func TestCPUTimeCountsChildren(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	spin := exec.Command(sh, "-c", "while :; do :; done")
	if err := spin.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { spin.Process.Kill(); spin.Wait() }()
	var c cpuTime
	if err := c.start(); err != nil {
		t.Fatal(err)
	}
	// A live child, spinning for this long...
	time.Sleep(200 * time.Millisecond)
	// ...and a child run and reaped inside the region.
	loop := exec.Command(sh, "-c", "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done")
	if err := loop.Run(); err != nil {
		t.Fatal(err)
	}
	if err := c.stop(); err != nil {
		t.Fatal(err)
	}
	reaped := loop.ProcessState.UserTime() + loop.ProcessState.SystemTime()
	// The spinner shares 1 or more CPUs with the rest of the machine: it
	// got at least a tenth of one in 200 ms, or the machine is not usable.
	if min := reaped + 20*time.Millisecond; c.sum < min {
		t.Errorf("CPU time %v over a region with a spinning child and a reaped one of %v: want at least %v", c.sum, reaped, min)
	}
	if c.sum > 2*time.Second {
		t.Errorf("CPU time %v over a region of about 0.2 s on this machine's CPUs: counted twice?", c.sum)
	}
}
