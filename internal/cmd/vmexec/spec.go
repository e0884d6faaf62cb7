//go:build linux

package main

// specPath is where vmexec leaves the guest's init its instructions.
const specPath = "/etc/kbench/vmexec.json"

// guestSpec is what the init needs to run the binary as the host would.
type guestSpec struct {
	Path    string   `json:"path"` // the test binary, at its host path
	Args    []string `json:"args"` // argv, Args[0] included
	Env     []string `json:"env"`
	Dir     string   `json:"dir"` // the working directory (go test's package directory)
	UID     int      `json:"uid"`
	GID     int      `json:"gid"`
	Groups  []int    `json:"groups"`
	Rlimits []rlimit `json:"rlimits"`
	// Modules are kernel modules to load, dependencies first, as paths
	// in the initramfs.
	Modules []string `json:"modules"`
	// OneStream: the host's stdout and stderr are one file, so the
	// binary gets one pipe for both and their order is kept exactly.
	OneStream bool `json:"one_stream"`
	// Outputs are files and directories the binary writes for the user
	// (go test's -test.*profile files, KBENCH_PROFILE, GOCOVERDIR): the
	// init sends them back after the binary ends.
	Outputs []string `json:"outputs"`
}

type rlimit struct {
	Resource int    `json:"resource"`
	Name     string `json:"name"`
	Cur      uint64 `json:"cur"`
	Max      uint64 `json:"max"`
}
