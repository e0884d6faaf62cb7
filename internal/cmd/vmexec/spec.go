//go:build linux

package main

// specPath is where vmexec leaves the guest's init its instructions.
const specPath = "/etc/kbench/vmexec.json"

// guestSpec is what the init needs to run the binary as the host would.
type guestSpec struct {
	Path      string   `json:"path"` // the test binary, at its host path
	Args      []string `json:"args"` // argv, Args[0] included
	Env       []string `json:"env"`
	Dir       string   `json:"dir"` // go test's package directory
	UID       int      `json:"uid"`
	GID       int      `json:"gid"`
	Groups    []int    `json:"groups"`
	Rlimits   []rlimit `json:"rlimits"`
	Modules   []string `json:"modules"`    // to load, dependencies first, as initramfs paths
	OneStream bool     `json:"one_stream"` // the host's stdout and stderr are one file: one pipe keeps their order
	Outputs   []string `json:"outputs"`    // what the binary writes for the user, sent back after it ends
}

type rlimit struct {
	Resource int `json:"resource"`
	Cur, Max uint64
}
