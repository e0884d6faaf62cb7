//go:build linux

package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/kbench/kbench/internal/abfile"
	"github.com/kbench/kbench/internal/abplan"
	"github.com/kbench/kbench/internal/abstat"
	"github.com/kbench/kbench/internal/vmflags"
)

// settings is everything that decides what a boot measures; a resumed
// run must have the same.
type settings struct {
	Dir    string `json:"dir" opt:"directory go test runs in"`
	Design string `json:"design" opt:"design"`              // fixed, planned, series or bisect
	List   string `json:"list,omitempty" opt:"kernel list"` // -series's or -bisect's file ("": an A/B)
	// Kernels in order: A and B, or the list's (good first, bad last).
	Kernels []kernel `json:"kernels"`
	Boots   int      `json:"boots" opt:"-boots"`
	SMP     string   `json:"smp" opt:"-smp"`
	Memory  string   `json:"memory" opt:"-memory"`
	Accel   string   `json:"accel" opt:"-accel"`
	GoTest  []string `json:"go_test" opt:"go test arguments"`
	Env     []string `json:"env" opt:"KBENCH_* and GOFLAGS environment"` // sorted
	Target  float64  `json:"target,omitempty" opt:"-target"`             // 0: no plan
	Row     string   `json:"row,omitempty" opt:"-row"`
	Profile int      `json:"profile,omitempty" opt:"-profile"`
	Duet    bool     `json:"duet,omitempty" opt:"-duet"`
}

// A kernel is an image plus a cmdline, labeled: its result file is
// LABEL.txt.
type kernel struct {
	Label  string `json:"label" opt:"label"`
	Image  string `json:"image" opt:"image"` // absolute
	SHA256 string `json:"sha256" opt:"contents (SHA-256)"`
	Append string `json:"append" opt:"cmdline"`
}

// stateVersion is kbab.json's format; a run of another is refused.
const stateVersion = 4

// state is kbab.json: the settings and the finished boots, with what
// their outputs (bootFile) cannot say: how long each took, its go test
// runs, why it was retried.
type state struct {
	Version  int          `json:"version"`
	Settings settings     `json:"settings"`
	Boots    []bootRecord `json:"boots"`
	// Confirmed is a bisection's end of its confirmation, nil before.
	Confirmed *confirmation `json:"confirmed,omitempty"`
}

// confirmation is how a bisection's planned A/B of good against bad
// ended: after Boots boots, with the row's verdict.
type confirmation struct {
	Boots   int            `json:"boots"`
	Verdict abstat.Verdict `json:"verdict"`
}

// bootRecord is one finished boot; its output is bootFile.
type bootRecord struct {
	Boot     int          `json:"boot"`   // 1-based, in the schedule
	Kernel   string       `json:"kernel"` // its label
	Seconds  float64      `json:"seconds"`
	Finished time.Time    `json:"finished"`
	Runs     []abplan.Run `json:"runs,omitempty"`    // a planned or bisection step boot's
	Retry    string       `json:"retry,omitempty"`   // why its first try was retried
	Profile  int          `json:"profile,omitempty"` // a profile boot's number (1-based)
}

// balancedOrder is the kernel of boot i (0-based) of n: rounds of every
// kernel, every other reversed, each pair rotated by one more (n > 2);
// ABBA for two (docs/comparing.md, "kbab -series", says why).
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

func newSettings(c *config) (settings, error) {
	s := c.settings
	var err error
	if s.Dir, err = os.Getwd(); err != nil {
		return s, err
	}
	if s.Target > 0 {
		s.Boots = 0 // the plan's
	}
	for _, k := range c.kernels {
		img, err := filepath.Abs(k.image)
		if err != nil {
			return s, err
		}
		sum := ""
		if k.build != nil {
			sum = k.build.Key
		} else if sum, err = vmflags.ImageDigest(img); err != nil {
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
// it (its field's opt tag), a kernel's after its label.
func differences(old, now settings) []string {
	d := fieldDiffs(old, now, "")
	if len(old.Kernels) != len(now.Kernels) {
		return append(d, fmt.Sprintf("kernels: was %d, now %d", len(old.Kernels), len(now.Kernels)))
	}
	for i := range now.Kernels {
		d = append(d, fieldDiffs(old.Kernels[i], now.Kernels[i], "kernel "+now.Kernels[i].Label+"'s ")...)
	}
	return d
}

// fieldDiffs names each opt-tagged field of old and now that differs.
func fieldDiffs(old, now any, prefix string) []string {
	var d []string
	o, n := reflect.ValueOf(old), reflect.ValueOf(now)
	for i := range o.NumField() {
		a, b := fmt.Sprint(o.Field(i)), fmt.Sprint(n.Field(i))
		if opt := o.Type().Field(i).Tag.Get("opt"); opt != "" && a != b {
			d = append(d, fmt.Sprintf("%s%s: was %q, now %q", prefix, opt, a, b))
		}
	}
	return d
}

// parseState decodes a kbab.json of this version (json's errors say
// what is wrong: a field, a type, a character).
func parseState(b []byte) (*state, error) {
	var v struct{ Version int }
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	if v.Version != stateVersion {
		return nil, fmt.Errorf("version %d: this kbab reads version %d: finish that run with the kbab that began it, or use a new -out", v.Version, stateVersion)
	}
	st, dec := &state{}, json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return st, dec.Decode(st)
}

// check makes sure the finished boots add up under the settings: in
// the design's order, profile boots last, no more than asked for.
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
		if want, why := st.bootKernel(i); want != "" && d.Kernel != want {
			return fmt.Errorf("%s is kernel %q: want %q, %s", at, d.Kernel, want, why)
		}
	}
	return nil
}

// bootKernel is the label boot i must have and why; "" for a
// bisection's step (its search's replay checks it: bisectDesign.feed).
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
	return s.label([]int{0, len(s.Kernels) - 1}[balancedOrder(i, 2)]), "its place in the confirmation's ABBA order"
}

// checkLabel checks a kernel's label, which names its file LABEL.txt.
func checkLabel(l string) error {
	if l == "" || len(l) > 64 || l == "." || l == ".." || strings.Trim(l, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+-") != "" || strings.HasPrefix(l, "-") {
		return fmt.Errorf("label %q: want 1 to 64 letters, digits and . _ + - (not first), it names the kernel's file LABEL.txt", l)
	}
	return nil
}

// bootBase is boot r's files less their extension: DIR/boots/NN-LABEL,
// a profile boot's DIR/boots/pNN-LABEL.
func bootBase(dir string, r bootRecord) string {
	name := fmt.Sprintf("%02d-%s", r.Boot, r.Kernel)
	if r.Profile > 0 {
		name = fmt.Sprintf("p%02d-%s", r.Profile, r.Kernel)
	}
	return filepath.Join(dir, "boots", name)
}

// bootFile is boot r's output.
func bootFile(dir string, r bootRecord) string { return bootBase(dir, r) + ".txt" }

// outputs joins the outputs of kernel label's boots among rs that
// belong in its file (inFile), in order: what LABEL.txt holds after them.
func (st *state) outputs(dir, label string, rs []bootRecord) ([]byte, error) {
	var b []byte
	for _, r := range rs {
		if r.Kernel == label && st.inFile(r) {
			out, err := os.ReadFile(bootFile(dir, r))
			if err != nil {
				return nil, err
			}
			b = append(b, out...)
		}
	}
	return b, nil
}

// inFile reports whether finished boot r's output belongs in its
// kernel's file: a timed boot's, except a bisection step's boot of good
// or bad, so that those two files are its confirmation.
func (st *state) inFile(r bootRecord) bool {
	ks := st.Settings.Kernels
	end := r.Kernel == ks[0].Label || r.Kernel == ks[len(ks)-1].Label
	return r.Profile == 0 && !(end && st.Confirmed != nil && r.Boot > st.Confirmed.Boots)
}

// checkOutputs makes sure each finished boot's output is there with
// boot ids of its own, which it returns, and writes anew each kernel's
// file that is not its boots' outputs (docs/kbab.md, "Resume, crashes
// and edits").
func (st *state) checkOutputs(dir string, stderr io.Writer) (map[string]bool, error) {
	ids := map[string]bool{}
	for _, r := range st.Boots {
		b := bootFile(dir, r)
		out, err := os.ReadFile(b)
		if err != nil {
			return nil, fmt.Errorf("%v: boot %d's output, which kbab.json says finished; use a new -out", err, r.Boot)
		}
		if err := fresh(b, out, ids); err != nil {
			return nil, err
		}
	}
	for _, k := range st.Settings.Kernels {
		want, err := st.outputs(dir, k.Label, st.Boots)
		if err != nil {
			return nil, err
		}
		p := filepath.Join(dir, k.Label+".txt")
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

// fresh adds the boot ids of output p (out) to ids, or says why they
// are not a fresh boot's.
func fresh(p string, out []byte, ids map[string]bool) error {
	var got []string
	for l := range strings.Lines(string(out)) {
		if id, ok := abfile.BootID(l); ok {
			got = append(got, id)
		}
	}
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
	if err == nil {
		err = writeSynced(p+".tmp", os.O_CREATE|os.O_TRUNC, append(b, '\n'))
	}
	if err == nil {
		err = os.Rename(p+".tmp", p)
	}
	if err != nil {
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

// writeSynced writes b to file p opened with flag (and O_WRONLY), synced.
func writeSynced(p string, flag int, b []byte) error {
	f, err := os.OpenFile(p, os.O_WRONLY|flag, 0o666)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	return cmp.Or(err, f.Sync(), f.Close())
}
