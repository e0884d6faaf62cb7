//go:build linux

package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/kbench/kbench/internal/abfile"
)

// settings is everything that decides what a boot measures; a resumed
// run must have the same.
type settings struct {
	Dir string `json:"dir" opt:"directory go test runs in"`
	// Design is the run's: fixed, planned, series or bisect (designs.go).
	Design string `json:"design" opt:"design"`
	// List is -series's or -bisect's file, as given (for messages); ""
	// for an A/B.
	List string `json:"list,omitempty" opt:"kernel list"`
	// Kernels in order: A and B of an A/B, a series' or a bisection's
	// from good (first) to bad (last).
	Kernels []kernel `json:"kernels"`
	Boots   int      `json:"boots" opt:"-boots"`
	SMP     string   `json:"smp" opt:"-smp"`
	Memory  string   `json:"memory" opt:"-memory"`
	Accel   string   `json:"accel" opt:"-accel"`
	GoTest  []string `json:"go_test" opt:"go test arguments"`
	Env     []string `json:"env" opt:"KBENCH_* and GOFLAGS environment"` // sorted
	// Target is -target's mde (0: the fixed design of Boots a side).
	Target float64 `json:"target,omitempty" opt:"-target"`
	// Row is -bisect's -row pattern.
	Row string `json:"row,omitempty" opt:"-row"`
	// Profile is -profile's profile boots a side (0: none).
	Profile int `json:"profile,omitempty" opt:"-profile"`
	// Duet runs the A/B's boots in pairs, A and B at once (duet.go).
	Duet bool `json:"duet,omitempty" opt:"-duet"`
}

// A kernel is an image plus a cmdline, labeled: its result file is
// LABEL.txt.
type kernel struct {
	Label  string `json:"label" opt:"label"`
	Image  string `json:"image" opt:"kernel"` // absolute
	SHA256 string `json:"sha256" opt:"sha256"`
	Append string `json:"append" opt:"append"`
}

// stateVersion is kbab.json's format; a run begun by a kbab of another
// is refused. Version 4 lists profile boots among the boots.
const stateVersion = 4

// state is kbab.json: the settings and the finished boots, with what
// their outputs (bootFile) cannot say: how long each took, its go test
// runs, why it was retried.
type state struct {
	Version  int          `json:"version"`
	Settings settings     `json:"settings"`
	Boots    []bootRecord `json:"boots"`
	// Confirmed is a bisection's end of its confirmation (the planned
	// A/B of good against bad), nil before.
	Confirmed *confirmation `json:"confirmed,omitempty"`
}

// confirmation is how a bisection's planned A/B of good against bad
// ended: after Boots boots, with the row's verdict.
type confirmation struct {
	Boots   int    `json:"boots"`
	Verdict string `json:"verdict"`
}

// pkgRun is one go test run of a planned boot: a package, its -count
// and the rows it runs (benchstat's full names).
type pkgRun struct {
	Pkg   string   `json:"pkg"`
	Count int      `json:"count"`
	Rows  []string `json:"rows"`
}

// bootRecord is one finished boot; its output is bootFile, of which its
// kernel's file (LABEL.txt) holds a copy after the boots before it (a
// timed boot's).
type bootRecord struct {
	Boot     int       `json:"boot"`   // 1-based, in the schedule
	Kernel   string    `json:"kernel"` // its label
	Seconds  float64   `json:"seconds"`
	Finished time.Time `json:"finished"`
	Runs     []pkgRun  `json:"runs,omitempty"` // a planned or bisection step boot's
	// Retry says why the boot's first try was retried (its guest died
	// or froze), for the report; "" when it was not.
	Retry string `json:"retry,omitempty"`
	// Profile is a profile boot's number among them (1-based), 0 for a
	// timed boot (profile.go).
	Profile int `json:"profile,omitempty"`
}

// balancedOrder is the kernel (index) of boot i (0-based) of n kernels:
// rounds that each boot every kernel once, every other round reversed,
// each pair of rounds rotated by one kernel more than the last (n > 2);
// ABBA for two. A drift linear in time then adds the same to every
// kernel's mean, and no kernel keeps the ends of the rounds
// (docs/comparing.md, "kbab -series").
func balancedOrder(i, n int) int {
	round, place := i/n, i%n
	if round%2 == 1 {
		place = n - 1 - place
	}
	rot := 0
	if n > 2 {
		rot = (round / 2) % n
	}
	return (place + rot) % n
}

// label is kernel k's label.
func (s settings) label(k int) string { return s.Kernels[k].Label }

// kernelIndex is the index of the kernel labeled l, -1 where none is.
func (s settings) kernelIndex(l string) int {
	return slices.IndexFunc(s.Kernels, func(k kernel) bool { return k.Label == l })
}

func newSettings(c *config) (settings, error) {
	dir, err := os.Getwd()
	if err != nil {
		return settings{}, err
	}
	s := settings{Dir: dir, Design: c.design, List: c.list, Boots: c.boots, SMP: c.smp, Memory: c.memory,
		Accel: c.accel, GoTest: c.goTest, Target: c.target, Row: c.row, Profile: c.profile, Duet: c.duet}
	if c.target > 0 {
		s.Boots = 0 // the plan's
	}
	for _, k := range c.kernels {
		img, err := filepath.Abs(k.image)
		if err != nil {
			return s, err
		}
		sum, err := k.digest(img)
		if err != nil {
			return s, fmt.Errorf("%s: %v", k.from, err)
		}
		s.Kernels = append(s.Kernels, kernel{Label: k.label, Image: img, SHA256: sum, Append: k.append})
	}
	for _, e := range os.Environ() {
		if strings.HasPrefix(e, "KBENCH_") || strings.HasPrefix(e, "GOFLAGS=") {
			s.Env = append(s.Env, e)
		}
	}
	slices.Sort(s.Env)
	return s, nil
}

// differences names each setting that differs, as the option that sets
// it (its field's opt tag). A resume's settings are the command line's,
// checked, only where none differs.
func differences(old, now settings) []string {
	d := fieldDiffs(old, now, func(opt string) string { return opt })
	if len(old.Kernels) != len(now.Kernels) {
		return append(d, fmt.Sprintf("kernels: was %d, now %d", len(old.Kernels), len(now.Kernels)))
	}
	for i := range now.Kernels {
		d = append(d, fieldDiffs(old.Kernels[i], now.Kernels[i], func(opt string) string { return kernelOption(now, i, opt) })...)
	}
	return d
}

// fieldDiffs names each field of old and now, structs of one type,
// that differs and has an opt tag, as name(tag) says.
func fieldDiffs(old, now any, name func(opt string) string) []string {
	var d []string
	o, n := reflect.ValueOf(old), reflect.ValueOf(now)
	for i := range o.NumField() {
		a, b := fmt.Sprint(o.Field(i)), fmt.Sprint(n.Field(i))
		if opt := o.Type().Field(i).Tag.Get("opt"); opt != "" && a != b {
			d = append(d, fmt.Sprintf("%s: was %q, now %q", name(opt), a, b))
		}
	}
	return d
}

// kernelOption names what sets kernel i's label, image ("kernel"),
// its contents ("sha256") or cmdline ("append"): -a-kernel, -b-append
// for an A/B; the list's line for a series or a bisection.
func kernelOption(s settings, i int, what string) string {
	if what == "sha256" {
		return kernelOption(s, i, "kernel") + "'s contents (SHA-256)"
	}
	if s.List == "" && i < 2 {
		if what == "label" {
			return "label of " + []string{"A", "B"}[i]
		}
		return "-" + []string{"a", "b"}[i] + "-" + what
	}
	field := map[string]string{"label": "label", "kernel": "image", "append": "cmdline"}[what]
	return fmt.Sprintf("%s kernel %d's %s", s.List, i+1, field)
}

// parseState decodes the text of a kbab.json of this version, naming
// where it is not (line and column).
func parseState(b []byte) (*state, error) {
	var v struct {
		Version int `json:"version"`
	}
	err := json.Unmarshal(b, &v)
	if err == nil && v.Version != stateVersion {
		return nil, fmt.Errorf("version %d: this kbab reads version %d: finish that run with the kbab that began it, or use a new -out", v.Version, stateVersion)
	}
	st, dec := &state{}, json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err == nil {
		err = dec.Decode(st)
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		// Offset counts the bad byte itself.
		return nil, fmt.Errorf("%s: %v", where(b, syn.Offset-1), err)
	case errors.As(err, &typ):
		return nil, fmt.Errorf("%s: %v", where(b, typ.Offset), err)
	case err != nil:
		return nil, fmt.Errorf("%s: %v", where(b, dec.InputOffset()), err)
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

// check makes sure the finished boots add up under the settings (the
// command line's): in the design's order, profile boots after the
// timed ones, and no more than the settings ask for (their outputs are
// checked by checkOutputs).
func (st *state) check() error {
	s := st.Settings
	n := len(s.Kernels)
	if st.Confirmed != nil && (s.Design != "bisect" || st.Confirmed.Boots < 2 || st.Confirmed.Boots > len(st.Boots)) {
		return fmt.Errorf("confirmed is after %d boots of %d with design %s: want a bisection's, within its boots", st.Confirmed.Boots, len(st.Boots), s.Design)
	}
	timed, profiles := 0, 0
	for i, d := range st.Boots {
		at := fmt.Sprintf("boots[%d] (boot %d)", i, d.Boot)
		switch {
		case d.Boot != i+1:
			return fmt.Errorf("boots[%d] is boot %d: want %d (boots finish in order)", i, d.Boot, i+1)
		case d.Profile == 0 && profiles > 0:
			return fmt.Errorf("%s is a timed boot after profile boots: want the profile boots last", at)
		case d.Profile > 0 && (d.Profile != profiles+1 || profiles >= 2*s.Profile):
			return fmt.Errorf("%s is profile boot %d: want %d, and at most the %d of settings.profile %d", at, d.Profile, profiles+1, 2*s.Profile, s.Profile)
		case !(d.Seconds >= 0):
			return fmt.Errorf("%s took %v seconds: want 0 or more", at, d.Seconds)
		}
		if d.Profile > 0 {
			profiles++
		} else if timed++; s.Target == 0 && timed > n*s.Boots {
			return fmt.Errorf("%s: want at most the %d timed boots of %d kernels at settings.boots %d", at, n*s.Boots, n, s.Boots)
		}
		// A bisection's step boots (no kernel here) are checked by
		// replaying its search (bisectDesign.feed).
		if want, why := st.bootKernel(i); want != "" && d.Kernel != want {
			return fmt.Errorf("%s is kernel %q: want %q, %s", at, d.Kernel, want, why)
		}
	}
	return nil
}

// bootKernel is the label boot i must have and why; "" for a bisection's
// step, which its search picks (a middle image: check and the search's
// replay see to it).
func (st *state) bootKernel(i int) (label, why string) {
	s := st.Settings
	switch j := st.Boots[i].Profile; {
	case j > 0:
		return s.label(balancedOrder(j-1, 2)), "its place in the profile boots' ABBA order"
	case s.Design != "bisect":
		return s.label(balancedOrder(i, len(s.Kernels))), "its place in the balanced order"
	case st.Confirmed != nil && i >= st.Confirmed.Boots:
		return "", ""
	}
	// The confirmation: an A/B of the first kernel against the last.
	return s.label([]int{0, len(s.Kernels) - 1}[balancedOrder(i, 2)]), "its place in the confirmation's ABBA order"
}

// checkLabel checks a kernel's label, which names its file LABEL.txt.
func checkLabel(l string) error {
	if l == "" || len(l) > 64 || l == "." || l == ".." || strings.Trim(l, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+-") != "" || strings.HasPrefix(l, "-") {
		return fmt.Errorf("label %q: want 1 to 64 letters, digits and . _ + - (not first), it names the kernel's file LABEL.txt", l)
	}
	return nil
}

// bootBase is boot r's files in dir (-out) less their extension:
// DIR/boots/NN-LABEL, a profile boot's DIR/boots/pNN-LABEL.
func bootBase(dir string, r bootRecord) string {
	name := fmt.Sprintf("%02d-%s", r.Boot, r.Kernel)
	if r.Profile > 0 {
		name = fmt.Sprintf("p%02d-%s", r.Profile, r.Kernel)
	}
	return filepath.Join(dir, "boots", name)
}

// bootFile is boot r's output in dir (-out), as it ran.
func bootFile(dir string, r bootRecord) string { return bootBase(dir, r) + ".txt" }

// checkOutputs makes sure each finished boot's output (bootFile) is
// there with boot ids of its own, which it returns, and makes each
// kernel's file its timed boots' outputs one after another: the boot
// files are the record, and a kernel's file that is not them (an append
// cut short, an edit) is written anew from them, naming it
// (docs/kbab.md, "Resume, crashes and edits").
func (st *state) checkOutputs(dir string, stderr io.Writer) (map[string]bool, error) {
	ids, joined := map[string]bool{}, map[string][]byte{}
	for _, r := range st.Boots {
		b := bootFile(dir, r)
		out, err := os.ReadFile(b)
		if err != nil {
			return nil, fmt.Errorf("%v: boot %d's output, which kbab.json says finished; use a new -out", err, r.Boot)
		}
		got, err := bootIDs(b)
		if err == nil {
			err = fresh(b, got, ids)
		}
		if err != nil {
			return nil, err
		}
		if r.Profile == 0 {
			joined[r.Kernel] = append(joined[r.Kernel], out...)
		}
	}
	for _, k := range st.Settings.Kernels {
		p, want := filepath.Join(dir, k.Label+".txt"), joined[k.Label]
		have, err := os.ReadFile(p)
		if err == nil && bytes.Equal(have, want) {
			continue
		}
		if len(have) > 0 {
			kept := ""
			if !bytes.HasPrefix(have, want) && !bytes.HasPrefix(want, have) {
				// An edit, not an append cut short: keep what it held.
				if err := os.Rename(p, p+".old"); err != nil {
					return nil, err
				}
				kept = ", kept as " + filepath.Base(p) + ".old"
			}
			fmt.Fprintf(stderr, "kbab: %s: %d bytes, not the %d of its finished boots' outputs (an append cut short, or an edit%s): writing it anew from boots/\n", p, len(have), len(want), kept)
		}
		if err := os.WriteFile(p, want, 0o666); err != nil {
			return nil, err
		}
	}
	return ids, nil
}

// fresh adds boot ids got, of the output p, to ids, or says why they
// are not a fresh boot's: none, or one another boot printed.
func fresh(p string, got []string, ids map[string]bool) error {
	if len(got) == 0 {
		return fmt.Errorf("%s has no %q line, so kbcompare cannot tell boots apart (run benchmark packages: their TestMain prints it)", p, abfile.BootIDLine)
	}
	for _, id := range got {
		if ids[id] {
			return fmt.Errorf("%s has boot id %s, which an earlier boot printed: not a fresh boot (a cached go test result, or an -exec that does not boot?)", p, id)
		}
	}
	for _, id := range got {
		ids[id] = true
	}
	return nil
}

// write replaces p atomically, so a crash leaves the old or the new state.
func (st *state) write(p string) error {
	st.Version = stateVersion
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	tmp := p + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	_, err = f.Write(append(b, '\n'))
	// Renamed only once whole and synced; closed whatever happened.
	if err = cmp.Or(err, f.Sync(), f.Close()); err != nil {
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
