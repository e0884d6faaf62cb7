//go:build linux

package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// settings is everything that decides what a boot measures; a resumed
// run must have the same.
type settings struct {
	Dir    string   `json:"dir"` // where go test runs
	A      kernel   `json:"a"`
	B      kernel   `json:"b"`
	Boots  int      `json:"boots"`
	Order  string   `json:"order"`
	SMP    string   `json:"smp"`
	Memory string   `json:"memory"`
	Accel  string   `json:"accel"`
	GoTest []string `json:"go_test"`
	Env    []string `json:"env"` // KBENCH_* and GOFLAGS, sorted
	// Target is -target's mde (0: the fixed design of Boots a side).
	Target float64 `json:"target,omitempty"`
}

type kernel struct {
	Image  string `json:"image"` // absolute
	SHA256 string `json:"sha256"`
	Append string `json:"append"`
}

// state is kbab.json: the settings and the finished boots.
type state struct {
	Settings settings `json:"settings"`
	Done     []done   `json:"done"`
	// Sizes of A.txt and B.txt after the last finished boot: bytes past
	// them are an append cut short, and are cut off on resume.
	Size map[string]int64 `json:"size"`
	// Counts are a planned run's -count per package (import path), as
	// its first plan chose them; Round the go test runs of the boot pair
	// under way, which both of its boots run alike.
	Counts map[string]int `json:"counts,omitempty"`
	Round  []pkgRun       `json:"round,omitempty"`
}

// pkgRun is one go test run of a planned boot: a package, its -count
// and the rows it runs (benchstat's full names).
type pkgRun struct {
	Pkg   string   `json:"pkg"`
	Count int      `json:"count"`
	Rows  []string `json:"rows"`
}

type done struct {
	Boot     int       `json:"boot"` // 1-based, in the schedule
	Side     string    `json:"side"`
	Seconds  float64   `json:"seconds"`
	Finished time.Time `json:"finished"`
	BootIDs  []string  `json:"boot_ids"`
	Runs     []pkgRun  `json:"runs,omitempty"` // a planned boot's after the pilot
}

const order = "abba"

// side returns the kernel ("A" or "B") of boot i (0-based) in ABBA
// order: A B, B A, A B, B A, ...
func side(i int) string {
	if (i/2)%2 == (i % 2) {
		return "A"
	}
	return "B"
}

func newSettings(c *config) (settings, error) {
	dir, err := os.Getwd()
	if err != nil {
		return settings{}, err
	}
	s := settings{Dir: dir, Boots: c.boots, Order: order, SMP: c.smp, Memory: c.memory, Accel: c.accel, GoTest: c.goTest, Target: c.target}
	if c.target > 0 {
		s.Boots = 0 // the plan's
	}
	for _, k := range []struct {
		flag string
		in   kernelFlags
		to   *kernel
	}{{"-a-kernel", c.a, &s.A}, {"-b-kernel", c.b, &s.B}} {
		img, err := filepath.Abs(k.in.image)
		if err != nil {
			return s, err
		}
		sum, err := fileSHA256(img)
		if err != nil {
			return s, fmt.Errorf("%s: %v", k.flag, err)
		}
		*k.to = kernel{Image: img, SHA256: sum, Append: k.in.append}
	}
	for _, e := range os.Environ() {
		if strings.HasPrefix(e, "KBENCH_") || strings.HasPrefix(e, "GOFLAGS=") {
			s.Env = append(s.Env, e)
		}
	}
	slices.Sort(s.Env)
	return s, nil
}

func fileSHA256(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return "", err
	} else if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", p)
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// differences names each setting that differs, as the option that sets it.
func differences(old, now settings) []string {
	var d []string
	add := func(name, o, n string) {
		if o != n {
			d = append(d, fmt.Sprintf("%s: was %q, now %q", name, o, n))
		}
	}
	add("directory go test runs in", old.Dir, now.Dir)
	add("-a-kernel", old.A.Image, now.A.Image)
	if old.A.Image == now.A.Image {
		add("-a-kernel's contents (SHA-256)", old.A.SHA256, now.A.SHA256)
	}
	add("-a-append", old.A.Append, now.A.Append)
	add("-b-kernel", old.B.Image, now.B.Image)
	if old.B.Image == now.B.Image {
		add("-b-kernel's contents (SHA-256)", old.B.SHA256, now.B.SHA256)
	}
	add("-b-append", old.B.Append, now.B.Append)
	add("-boots", fmt.Sprint(old.Boots), fmt.Sprint(now.Boots))
	add("-target", fmt.Sprint(old.Target), fmt.Sprint(now.Target))
	add("order", old.Order, now.Order)
	add("-smp", old.SMP, now.SMP)
	add("-memory", old.Memory, now.Memory)
	add("-accel", old.Accel, now.Accel)
	add("go test arguments", strings.Join(old.GoTest, " "), strings.Join(now.GoTest, " "))
	add("KBENCH_* and GOFLAGS environment", strings.Join(old.Env, " "), strings.Join(now.Env, " "))
	return d
}

func readState(p string) (*state, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	st := &state{}
	if err := json.Unmarshal(b, st); err != nil {
		return nil, fmt.Errorf("%s: %v", p, err)
	}
	return st, nil
}

// write replaces p atomically, so a crash leaves the old or the new state.
func (st *state) write(p string) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	tmp := p + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, p)
}

// seen reports whether a finished boot printed boot id id.
func (st *state) seen(id string) bool {
	for _, d := range st.Done {
		if slices.Contains(d.BootIDs, id) {
			return true
		}
	}
	return false
}
