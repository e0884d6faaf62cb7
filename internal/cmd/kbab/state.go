//go:build linux

package main

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kbench/kbench/internal/abfile"
)

// settings is everything that decides what a boot measures; a resumed
// run must have the same.
type settings struct {
	Dir string `json:"dir"` // where go test runs
	// Design is the run's: fixed, planned, series or bisect (designs.go).
	Design string `json:"design"`
	// List is -series's or -bisect's file, as given (for messages); ""
	// for an A/B.
	List string `json:"list,omitempty"`
	// Kernels in order: A and B of an A/B, a series' or a bisection's
	// from good (first) to bad (last).
	Kernels []kernel `json:"kernels"`
	Boots   int      `json:"boots"`
	Order   string   `json:"order"`
	SMP     string   `json:"smp"`
	Memory  string   `json:"memory"`
	Accel   string   `json:"accel"`
	GoTest  []string `json:"go_test"`
	Env     []string `json:"env"` // KBENCH_* and GOFLAGS, sorted
	// Target is -target's mde (0: the fixed design of Boots a side).
	Target float64 `json:"target,omitempty"`
	// Row is -bisect's -row pattern.
	Row string `json:"row,omitempty"`
	// Profile is -profile's profile boots a side (0: none).
	Profile int `json:"profile,omitempty"`
	// Duet runs the A/B's boots in pairs, A and B at once (duet.go).
	Duet bool `json:"duet,omitempty"`
}

// A kernel is an image plus a cmdline, labeled: its result file is
// LABEL.txt.
type kernel struct {
	Label  string `json:"label"`
	Image  string `json:"image"` // absolute
	SHA256 string `json:"sha256"`
	Append string `json:"append"`
}

// stateVersion is kbab.json's format. Version 1 (no "version": the A/B
// kbab before series) is refused: its sides were fields "a" and "b";
// version 2 recorded each boot's boot ids, offset, length and SHA-256,
// which its output file (bootFile) now says.
const stateVersion = 3

// state is kbab.json: the settings and the finished boots, with what
// their outputs (bootFile) cannot say: how long each took, its go test
// runs, why it was retried.
type state struct {
	Version  int          `json:"version"`
	Settings settings     `json:"settings"`
	Boots    []bootRecord `json:"boots"`
	// Counts are a planned run's -count per package (import path), as
	// its first plan chose them; PairRuns the go test runs of the boot
	// pair under way, which both of its boots run alike.
	Counts   map[string]int `json:"counts,omitempty"`
	PairRuns []pkgRun       `json:"pair_runs,omitempty"`
	// Confirmed is a bisection's end of its confirmation (the planned
	// A/B of good against bad), nil before.
	Confirmed *confirmation `json:"confirmed,omitempty"`
	// Profiled are the finished profile boots (-profile), in order.
	Profiled []profiledBoot `json:"profiled,omitempty"`
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
// kernel's file (LABEL.txt) holds a copy after the boots before it.
type bootRecord struct {
	Boot     int       `json:"boot"`   // 1-based, in the schedule
	Kernel   string    `json:"kernel"` // its label
	Seconds  float64   `json:"seconds"`
	Finished time.Time `json:"finished"`
	Runs     []pkgRun  `json:"runs,omitempty"` // a planned or bisection step boot's
	// Retry says why the boot's first try was retried (its guest died
	// or froze), for the report; "" when it was not.
	Retry string `json:"retry,omitempty"`
}

// order names the boot order of every design but a bisection's steps
// (which its search picks): balancedOrder.
const order = "balanced"

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
	s := settings{Dir: dir, Design: c.design, List: c.list, Boots: c.boots, Order: order, SMP: c.smp, Memory: c.memory,
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

// differences names each setting that differs, as the option that sets it.
func differences(old, now settings) []string {
	var d []string
	add := func(name, o, n string) {
		if o != n {
			d = append(d, fmt.Sprintf("%s: was %q, now %q", name, o, n))
		}
	}
	add("directory go test runs in", old.Dir, now.Dir)
	add("design", old.Design, now.Design)
	add("kernel list", old.List, now.List)
	if len(old.Kernels) != len(now.Kernels) {
		d = append(d, fmt.Sprintf("kernels: was %d, now %d", len(old.Kernels), len(now.Kernels)))
	} else {
		for i, o := range old.Kernels {
			n := now.Kernels[i]
			add(kernelOption(now, i, "label"), o.Label, n.Label)
			add(kernelOption(now, i, "kernel"), o.Image, n.Image)
			if o.Image == n.Image {
				add(kernelOption(now, i, "kernel")+"'s contents (SHA-256)", o.SHA256, n.SHA256)
			}
			add(kernelOption(now, i, "append"), o.Append, n.Append)
		}
	}
	add("-boots", fmt.Sprint(old.Boots), fmt.Sprint(now.Boots))
	add("-target", fmt.Sprint(old.Target), fmt.Sprint(now.Target))
	add("-row", old.Row, now.Row)
	add("-profile", fmt.Sprint(old.Profile), fmt.Sprint(now.Profile))
	add("-duet", fmt.Sprint(old.Duet), fmt.Sprint(now.Duet))
	add("order", old.Order, now.Order)
	add("-smp", old.SMP, now.SMP)
	add("-memory", old.Memory, now.Memory)
	add("-accel", old.Accel, now.Accel)
	add("go test arguments", strings.Join(old.GoTest, " "), strings.Join(now.GoTest, " "))
	add("KBENCH_* and GOFLAGS environment", strings.Join(old.Env, " "), strings.Join(now.Env, " "))
	return d
}

// kernelOption names what sets kernel i's label, image ("kernel") or
// cmdline ("append"): -a-kernel, -b-append for an A/B; the list's line
// for a series or a bisection.
func kernelOption(s settings, i int, what string) string {
	if s.List == "" && i < 2 {
		if what == "label" {
			return "label of " + []string{"A", "B"}[i]
		}
		return "-" + []string{"a", "b"}[i] + "-" + what
	}
	field := map[string]string{"label": "label", "kernel": "image", "append": "cmdline"}[what]
	return fmt.Sprintf("%s kernel %d's %s", s.List, i+1, field)
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
	var v struct {
		Version int `json:"version"`
	}
	if json.Unmarshal(b, &v) == nil && v.Version != stateVersion {
		if v.Version == 0 {
			return nil, fmt.Errorf("version 1 (no \"version\": an A/B of kbab before series and bisections); this kbab reads version %d: finish that run with the kbab that began it, or use a new -out", stateVersion)
		}
		return nil, fmt.Errorf("version %d: this kbab reads version %d: finish that run with the kbab that began it, or use a new -out", v.Version, stateVersion)
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

// check makes sure the finished boots add up: in the design's order and
// no more than the settings ask for (their outputs are checked by
// checkOutputs).
func (st *state) check() error {
	s := st.Settings
	n := len(s.Kernels)
	switch {
	case !slices.Contains(designNames, s.Design):
		return fmt.Errorf("settings.design is %q: want one of %s", s.Design, strings.Join(designNames, ", "))
	case n < 2 || (s.Design == "bisect" && n < 3):
		return fmt.Errorf("settings.kernels has %d kernels: want 2 or more (3 or more for a bisection)", n)
	case (s.Design == "fixed" || s.Design == "planned") && n != 2:
		return fmt.Errorf("settings.kernels has %d kernels with design %s: want 2, A and B", n, s.Design)
	case !(s.Target >= 0 && s.Target < 1):
		return fmt.Errorf("settings.target is %v: want 0 (a fixed design) or a planned run's mde, above 0 and below 1", s.Target)
	case (s.Design == "planned" || s.Design == "bisect") != (s.Target > 0):
		return fmt.Errorf("settings.target is %v with design %s: want above 0 for planned and bisect, 0 for the others", s.Target, s.Design)
	case s.Target == 0 && s.Boots < 1:
		return fmt.Errorf("settings.boots is %d: want 1 or more", s.Boots)
	case s.Target > 0 && s.Boots != 0:
		return fmt.Errorf("settings.boots is %d with settings.target %v: want 0, the plan decides a planned run's boots", s.Boots, s.Target)
	case s.Order != order:
		return fmt.Errorf("settings.order is %q: want %q", s.Order, order)
	case s.Target == 0 && len(st.Boots) > n*s.Boots:
		return fmt.Errorf("boots lists %d finished boots: want at most the %d of %d kernels at settings.boots %d", len(st.Boots), n*s.Boots, n, s.Boots)
	case st.Confirmed != nil && (s.Design != "bisect" || st.Confirmed.Boots < 2 || st.Confirmed.Boots > len(st.Boots)):
		return fmt.Errorf("confirmed is after %d boots of %d with design %s: want a bisection's, within its boots", st.Confirmed.Boots, len(st.Boots), s.Design)
	}
	for pkg, c := range st.Counts {
		if pkg == "" || c < 1 {
			return fmt.Errorf("counts has %q: %d: want a package's import path and a -count of 1 or more", pkg, c)
		}
	}
	for i, r := range st.PairRuns {
		if r.Pkg == "" || r.Count < 1 || len(r.Rows) == 0 {
			return fmt.Errorf("pair_runs[%d] is package %q, count %d, %d rows: want a package, a -count of 1 or more and its rows", i, r.Pkg, r.Count, len(r.Rows))
		}
	}
	for i, k := range s.Kernels {
		if !filepath.IsAbs(k.Image) || !isSHA256(k.SHA256) {
			return fmt.Errorf("settings.kernels[%d] is image %q, sha256 %q: want an absolute path and 64 hex digits", i, k.Image, k.SHA256)
		}
		if err := checkLabel(k.Label); err != nil {
			return fmt.Errorf("settings.kernels[%d]: %v", i, err)
		}
		if j := s.kernelIndex(k.Label); j != i {
			return fmt.Errorf("settings.kernels[%d] has label %q, as kernels[%d] has: want labels of their own", i, k.Label, j)
		}
	}
	for i, d := range st.Boots {
		at := fmt.Sprintf("boots[%d]", i)
		if d.Boot != i+1 {
			return fmt.Errorf("%s is boot %d: want %d (boots finish in order)", at, d.Boot, i+1)
		}
		// A bisection's step boots (no kernel here) are checked by
		// replaying its search (bisectDesign.feed).
		if want, why := st.bootKernel(i); want != "" && d.Kernel != want {
			return fmt.Errorf("%s (boot %d) is kernel %q: want %q, %s", at, d.Boot, d.Kernel, want, why)
		}
		if !(d.Seconds >= 0) {
			return fmt.Errorf("%s (boot %d) took %v seconds: want 0 or more", at, d.Boot, d.Seconds)
		}
	}
	return st.checkProfiled(map[string]int{})
}

// bootKernel is the label boot i must have and why; "" for a bisection's
// step, which its search picks (a middle image: check and the search's
// replay see to it).
func (st *state) bootKernel(i int) (label, why string) {
	s := st.Settings
	if s.Design != "bisect" {
		return s.label(balancedOrder(i, len(s.Kernels))), "its place in the balanced order"
	}
	if st.Confirmed != nil && i >= st.Confirmed.Boots {
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

func isSHA256(s string) bool {
	b, err := hex.DecodeString(s)
	return err == nil && len(b) == sha256.Size && strings.ToLower(s) == s
}

// bootFile is boot r's output in dir (-out), as it ran: DIR/boots/NN-LABEL.txt.
func bootFile(dir string, r bootRecord) string {
	return filepath.Join(dir, "boots", fmt.Sprintf("%02d-%s.txt", r.Boot, r.Kernel))
}

// checkOutputs makes sure each finished boot's output (bootFile) is
// there with boot ids of its own, which it returns, and that each
// kernel's file holds its boots' outputs one after another: bytes past
// them (an append cut short) are cut off, naming how many, anything else
// refused, naming the boot (docs/kbab.md, "Resume, crashes and edits").
func (st *state) checkOutputs(dir string, stderr io.Writer) (map[string]bool, error) {
	ids := map[string]bool{}
	for _, k := range st.Settings.Kernels {
		p := filepath.Join(dir, k.Label+".txt")
		have, err := os.ReadFile(p)
		if errors.Is(err, os.ErrNotExist) {
			err = os.WriteFile(p, nil, 0o666)
		}
		if err != nil {
			return nil, err
		}
		off := 0
		for _, r := range st.Boots {
			if r.Kernel != k.Label {
				continue
			}
			b := bootFile(dir, r)
			out, err := os.ReadFile(b)
			if err != nil {
				return nil, fmt.Errorf("%v: boot %d's output, which kbab.json says finished; use a new -out", err, r.Boot)
			}
			end := off + len(out)
			switch {
			case len(have) < end:
				return nil, fmt.Errorf("%s ends at byte %d, inside boot %d's output (bytes %d-%d): it was cut mid-boot or changed outside kbab, and kbab will not add boots to it; use a new -out",
					p, len(have), r.Boot, off, end)
			case !bytes.Equal(have[off:end], out):
				return nil, fmt.Errorf("%s: bytes %d-%d, boot %d's output, are not what it appended (%s): it was changed outside kbab; use a new -out", p, off, end, r.Boot, b)
			}
			off = end
			got, err := bootIDs(b)
			if err == nil {
				err = fresh(b, got, ids)
			}
			if err != nil {
				return nil, err
			}
		}
		if len(have) > off {
			fmt.Fprintf(stderr, "kbab: %s: cutting %d bytes past its last finished boot (an append that was cut short)\n", p, len(have)-off)
			if err := os.Truncate(p, int64(off)); err != nil {
				return nil, err
			}
		}
	}
	for j, p := range st.Profiled {
		if err := fresh(fmt.Sprintf("profiled[%d] (profile boot %d)", j, p.Boot), p.BootIDs, ids); err != nil {
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
