//go:build linux

package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kbench/kbench/internal/vmflags"
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
	// Profile is -profile's profile boots a side (0: none).
	Profile int `json:"profile,omitempty"`
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
	// Counts are a planned run's -count per package (import path), as
	// its first plan chose them; Round the go test runs of the boot pair
	// under way, which both of its boots run alike.
	Counts map[string]int `json:"counts,omitempty"`
	Round  []pkgRun       `json:"round,omitempty"`
	// Profiled are the finished profile boots (-profile), in order.
	Profiled []profiledBoot `json:"profiled,omitempty"`
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
	// What the boot appended to its side's file (A.txt, B.txt): Bytes
	// bytes from Offset, and their SHA-256.
	Offset int64    `json:"offset"`
	Bytes  int64    `json:"bytes"`
	SHA256 string   `json:"sha256"`
	Runs   []pkgRun `json:"runs,omitempty"` // a planned boot's after the pilot
	// Retry says why the boot's first try was retried (its guest died
	// or froze), for the report; "" when it was not.
	Retry string `json:"retry,omitempty"`
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
	s := settings{Dir: dir, Boots: c.boots, Order: order, SMP: c.smp, Memory: c.memory, Accel: c.accel, GoTest: c.goTest, Target: c.target, Profile: c.profile}
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
		sum, err := vmflags.ImageDigest(img)
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
	add("-profile", fmt.Sprint(old.Profile), fmt.Sprint(now.Profile))
	add("order", old.Order, now.Order)
	add("-smp", old.SMP, now.SMP)
	add("-memory", old.Memory, now.Memory)
	add("-accel", old.Accel, now.Accel)
	add("go test arguments", strings.Join(old.GoTest, " "), strings.Join(now.GoTest, " "))
	add("KBENCH_* and GOFLAGS environment", strings.Join(old.Env, " "), strings.Join(now.Env, " "))
	return d
}

// readState reads kbab.json. One that is not whole or whose boots do not
// add up is refused, naming where and what was expected: kbab cannot tell
// which boots finished under which settings, and a guess could merge
// boots of another run.
func readState(p string) (*state, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	st, err := parseState(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %v; kbab cannot tell which boots finished: restore the file, or use a new -out (the boots' own outputs are in boots/)", p, err)
	}
	return st, nil
}

// parseState decodes and checks the text of a kbab.json.
func parseState(b []byte) (*state, error) {
	if t := bytes.TrimLeft(b, " \t\r\n"); len(t) == 0 {
		return nil, fmt.Errorf("the file is empty (%d bytes): want the JSON object kbab writes", len(b))
	} else if t[0] != '{' {
		return nil, fmt.Errorf("%s: want a JSON object", where(b, int64(len(b)-len(t))))
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	st := &state{}
	if err := dec.Decode(st); err != nil {
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.Is(err, io.ErrUnexpectedEOF):
			return nil, fmt.Errorf("%s: the JSON ends there, inside its object: cut short", where(b, int64(len(b))))
		case errors.As(err, &syn):
			// Offset counts the bad byte itself.
			return nil, fmt.Errorf("%s: %v", where(b, syn.Offset-1), err)
		case errors.As(err, &typ):
			return nil, fmt.Errorf("%s: %s is a JSON %s, want a %v", where(b, typ.Offset), typ.Field, typ.Value, typ.Type)
		}
		return nil, fmt.Errorf("%s: %v", where(b, dec.InputOffset()), err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%s: more after the JSON object", where(b, dec.InputOffset()))
	}
	if err := st.check(); err != nil {
		return nil, err
	}
	return st, nil
}

// where names byte off of b as a line, column and byte.
func where(b []byte, off int64) string {
	off = min(max(off, 0), int64(len(b)))
	line := 1 + bytes.Count(b[:off], []byte("\n"))
	col := off - int64(bytes.LastIndexByte(b[:off], '\n'))
	return fmt.Sprintf("line %d, column %d (byte %d)", line, col, off)
}

// check makes sure the finished boots add up: in the ABBA order, no more
// than the settings ask for, each with a boot id of its own, and each
// side's outputs one after another in its file.
func (st *state) check() error {
	s := st.Settings
	switch {
	case !(s.Target >= 0 && s.Target < 1):
		return fmt.Errorf("settings.target is %v: want 0 (a fixed design) or a planned run's mde, above 0 and below 1", s.Target)
	case s.Target == 0 && s.Boots < 1:
		return fmt.Errorf("settings.boots is %d: want 1 or more", s.Boots)
	case s.Target > 0 && s.Boots != 0:
		return fmt.Errorf("settings.boots is %d with settings.target %v: want 0, the plan decides a planned run's boots", s.Boots, s.Target)
	case s.Order != order:
		return fmt.Errorf("settings.order is %q: want %q", s.Order, order)
	case s.Target == 0 && len(st.Done) > 2*s.Boots:
		return fmt.Errorf("done lists %d finished boots: want at most the %d of settings.boots %d", len(st.Done), 2*s.Boots, s.Boots)
	}
	for pkg, n := range st.Counts {
		if pkg == "" || n < 1 {
			return fmt.Errorf("counts has %q: %d: want a package's import path and a -count of 1 or more", pkg, n)
		}
	}
	for i, r := range st.Round {
		if r.Pkg == "" || r.Count < 1 || len(r.Rows) == 0 {
			return fmt.Errorf("round[%d] is package %q, count %d, %d rows: want a package, a -count of 1 or more and its rows", i, r.Pkg, r.Count, len(r.Rows))
		}
	}
	for name, k := range map[string]kernel{"a": s.A, "b": s.B} {
		if !filepath.IsAbs(k.Image) || !isSHA256(k.SHA256) {
			return fmt.Errorf("settings.%s is image %q, sha256 %q: want an absolute path and 64 hex digits", name, k.Image, k.SHA256)
		}
	}
	end := map[string]int64{}
	ids := map[string]int{}
	for i, d := range st.Done {
		at := fmt.Sprintf("done[%d]", i)
		switch {
		case d.Boot != i+1:
			return fmt.Errorf("%s is boot %d: want %d (boots finish in order)", at, d.Boot, i+1)
		case d.Side != side(i):
			return fmt.Errorf("%s (boot %d) is side %q: want %q, its place in the ABBA order", at, d.Boot, d.Side, side(i))
		case d.Offset != end[d.Side]:
			return fmt.Errorf("%s (boot %d) has offset %d: want %d, where %s.txt's boot before it ended", at, d.Boot, d.Offset, end[d.Side], d.Side)
		case d.Bytes < 1 || d.Bytes > math.MaxInt64-d.Offset:
			return fmt.Errorf("%s (boot %d) has bytes %d: want the length of its output, 1 or more", at, d.Boot, d.Bytes)
		case !isSHA256(d.SHA256):
			return fmt.Errorf("%s (boot %d) has sha256 %q: want 64 hex digits", at, d.Boot, d.SHA256)
		case !(d.Seconds >= 0):
			return fmt.Errorf("%s (boot %d) took %v seconds: want 0 or more", at, d.Boot, d.Seconds)
		case len(d.BootIDs) == 0:
			return fmt.Errorf("%s (boot %d) has no boot_ids: want the boot ids its output printed", at, d.Boot)
		}
		for _, id := range d.BootIDs {
			if j, dup := ids[id]; dup || strings.TrimSpace(id) != id || id == "" {
				return fmt.Errorf("%s (boot %d) has boot id %q, which boot %d had too or which is blank: want a fresh boot's", at, d.Boot, id, j)
			}
			ids[id] = d.Boot
		}
		end[d.Side] = d.Offset + d.Bytes
	}
	return st.checkProfiled(ids)
}

func isSHA256(s string) bool {
	b, err := hex.DecodeString(s)
	return err == nil && len(b) == sha256.Size && strings.ToLower(s) == s
}

// size is how long side's file is after its finished boots.
func (st *state) size(side string) int64 {
	var n int64
	for _, d := range st.Done {
		if d.Side == side {
			n = d.Offset + d.Bytes
		}
	}
	return n
}

// checkResult makes sure p, side's file, holds what its finished boots
// appended, and repairs what a crash can leave: bytes past the last
// finished boot are an append cut short (or a boot whose end kbab.json
// does not record yet), and are cut off, naming how many; that boot runs
// again. A file that ends inside a finished boot's output, or whose bytes
// differ from what a boot appended, is refused, naming the boot and its
// bytes.
func (st *state) checkResult(p, side string, stderr io.Writer) error {
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) && st.size(side) == 0 {
		return os.WriteFile(p, nil, 0o666)
	}
	if err != nil {
		return fmt.Errorf("%v, which kbab.json says holds %d bytes of finished boots; use a new -out", err, st.size(side))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	for _, d := range st.Done {
		if d.Side != side {
			continue
		}
		if fi.Size() < d.Offset+d.Bytes {
			return fmt.Errorf("%s ends at byte %d, inside boot %d's output (bytes %d-%d): it was cut mid-boot or changed outside kbab, and kbab will not add boots to it; use a new -out",
				p, fi.Size(), d.Boot, d.Offset, d.Offset+d.Bytes)
		}
		h := sha256.New()
		if _, err := io.Copy(h, io.NewSectionReader(f, d.Offset, d.Bytes)); err != nil {
			return err
		}
		if sum := hex.EncodeToString(h.Sum(nil)); sum != d.SHA256 {
			return fmt.Errorf("%s: bytes %d-%d, boot %d's output, are not what it appended (SHA-256 %.12s, want %.12s): it was changed outside kbab; use a new -out",
				p, d.Offset, d.Offset+d.Bytes, d.Boot, sum, d.SHA256)
		}
	}
	if want := st.size(side); fi.Size() > want {
		fmt.Fprintf(stderr, "kbab: %s: cutting %d bytes past its last finished boot (an append that was cut short)\n", p, fi.Size()-want)
		return f.Truncate(want)
	}
	return nil
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
	if err := os.Rename(tmp, p); err != nil {
		return err
	}
	// The rename itself survives a crash once the directory is synced.
	dir, err := os.Open(filepath.Dir(p))
	if err != nil {
		return err
	}
	defer dir.Close()
	return dir.Sync()
}

// seen reports whether a finished boot, timed or profile, printed boot
// id id.
func (st *state) seen(id string) bool {
	for _, d := range st.Done {
		if slices.Contains(d.BootIDs, id) {
			return true
		}
	}
	for _, p := range st.Profiled {
		if slices.Contains(p.BootIDs, id) {
			return true
		}
	}
	return false
}
