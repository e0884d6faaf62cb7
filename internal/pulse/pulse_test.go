//go:build linux

package pulse

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/kbench/kbench/internal/cpus"
	"github.com/kbench/kbench/internal/options"
	"github.com/kbench/kbench/internal/procfs"
	"github.com/kbench/kbench/internal/skip"
	"github.com/kbench/kbench/internal/thread"
)

// mainThreadSetErr is what forceDisable said when TestMain, which runs on
// the main thread, asked it to opt that thread in.
var mainThreadSetErr error

func TestMain(m *testing.M) {
	mainThreadSetErr = linux{}.forceDisable()
	if err := options.Parse(); err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(2)
	}
	os.Exit(m.Run())
}

// fake answers a pulse's questions from a script.
type fake struct {
	states  []State // successive get answers
	getErr  error
	setErr  error
	pinErr  error
	sets    int
	pinned  int
	spectre string
}

func (f *fake) pin(cpu int) error    { f.pinned = cpu; return f.pinErr }
func (f *fake) verify(cpu int) error { return nil }
func (f *fake) spectreV2() string    { return f.spectre }
func (f *fake) forceDisable() error  { f.sets++; return f.setErr }
func (f *fake) get() (State, error) {
	if f.getErr != nil {
		return 0, f.getErr
	}
	s := f.states[0]
	if len(f.states) > 1 {
		f.states = f.states[1:]
	}
	return s, nil
}

func TestPulseScripted(t *testing.T) {
	for _, c := range []struct {
		name     string
		k        fake
		mode     Mode
		initial  State
		sets     int
		skip     bool     // error wraps ErrNotSupported
		fails    bool     // other error
		words    []string // in the error
		before   State
		after    State
		noResult bool
	}{
		{name: "sham without control", k: fake{states: []State{Enable}}, mode: Sham, initial: Enable, before: Enable, after: Enable},
		{name: "sham with control", k: fake{states: []State{Controllable}}, mode: Sham, initial: Controllable, before: Controllable, after: Controllable},
		{name: "sham sees change", k: fake{states: []State{Controllable, Protected}}, mode: Sham, initial: Controllable, fails: true,
			words: []string{"prctl|enable (3) to prctl|force-disable (9)", "want prctl|enable (3)"}},
		{name: "protect", k: fake{states: []State{Controllable, Protected}}, mode: Protect, initial: Controllable, sets: 1, before: Controllable, after: Protected},
		{name: "protect without control", k: fake{states: []State{Enable}, spectre: retpolines}, mode: Protect, initial: Enable, skip: true,
			words: []string{"state enable (2)", "spectre_v2: Mitigation: Retpolines"}},
		{name: "protect not affected", k: fake{states: []State{NotAffected}, spectre: "Not affected"}, mode: Protect, initial: NotAffected, skip: true,
			words: []string{"not-affected (0)", "spectre_v2: Not affected"}},
		{name: "protect EPERM", k: fake{states: []State{Controllable}, setErr: unix.EPERM, spectre: retpolines}, mode: Protect, initial: Controllable, sets: 1, skip: true,
			words: []string{"EPERM", "state prctl|enable (3)", "spectre_v2: Mitigation"}},
		{name: "protect ENXIO", k: fake{states: []State{Controllable}, setErr: unix.ENXIO}, mode: Protect, initial: Controllable, sets: 1, skip: true,
			words: []string{"ENXIO"}},
		{name: "protect ERANGE", k: fake{states: []State{Controllable}, setErr: unix.ERANGE}, mode: Protect, initial: Controllable, sets: 1, fails: true,
			words: []string{"ERANGE"}},
		{name: "protect set ignored", k: fake{states: []State{Controllable, Controllable}}, mode: Protect, initial: Controllable, sets: 1, fails: true,
			words: []string{"want prctl|force-disable (9)"}},
		{name: "leak into new thread", k: fake{states: []State{Protected}}, mode: Sham, initial: Controllable, fails: true,
			words: []string{"leaked", "prctl|force-disable (9)"}},
		{name: "no prctl at all", k: fake{getErr: unix.EINVAL}, mode: Sham, initial: Enable, skip: true, words: []string{"EINVAL", "4.20"}},
		{name: "cpuset", k: fake{pinErr: unix.EINVAL, states: []State{Enable}}, mode: Sham, initial: Enable, skip: true, words: []string{"CPU 7", "cpuset"}},
		{name: "pin fails", k: fake{pinErr: errors.New("runs on CPU 3"), states: []State{Enable}}, mode: Sham, initial: Enable, fails: true, words: []string{"CPU 3"}},
		{name: "bad mode", k: fake{states: []State{Enable}}, mode: "bogus", initial: Enable, fails: true, words: []string{"bogus"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			k := c.k
			r, err := pulseOn(&k, 7, c.mode, c.initial, nil)
			if k.sets != c.sets {
				t.Errorf("%d sets, want %d", k.sets, c.sets)
			}
			switch {
			case c.skip && !errors.Is(err, skip.ErrNotSupported):
				t.Fatalf("err = %v, want a skip", err)
			case c.fails && (err == nil || errors.Is(err, skip.ErrNotSupported)):
				t.Fatalf("err = %v, want a failure", err)
			case !c.skip && !c.fails && err != nil:
				t.Fatal(err)
			}
			for _, w := range c.words {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("message lacks %q: %v", w, err)
				}
			}
			if err == nil && (r.Before != c.before || r.After != c.after || r.CPU != 7 || k.pinned != 7) {
				t.Errorf("result %v, pinned %d; want %v -> %v on CPU 7", r, k.pinned, c.before, c.after)
			}
		})
	}
}

func TestPulseWithoutInitialState(t *testing.T) {
	k := fake{states: []State{Enable}}
	_, err := pulseOn(&k, 0, Sham, 0, unix.EINVAL)
	if !errors.Is(err, skip.ErrNotSupported) || !strings.Contains(err.Error(), "EINVAL") {
		t.Fatalf("err = %v, want a skip naming EINVAL", err)
	}
}

// TestShamEveryCPU runs the real sham pulse on every online CPU.
func TestShamEveryCPU(t *testing.T) {
	initial, err := Initial()
	skip.IfNotSupported(t, getUnsupportedIf(err))
	online, err := cpus.Online()
	if err != nil {
		t.Fatal(err)
	}
	results, err := Sweep(online, Sham)
	skip.IfNotSupported(t, err)
	var got []int
	for _, r := range results {
		got = append(got, r.CPU)
		if r.Before != initial || r.After != initial {
			t.Errorf("%v, want %v throughout", r, initial)
		}
	}
	if !slices.Equal(got, online) {
		t.Errorf("pulsed CPUs %v, online %v", got, online)
	}
	if note, err := CheckContained(); err != nil {
		t.Fatal(err)
	} else if note != "" {
		t.Log(note)
	}
	t.Logf("%s: %s", Sham, SummarizeStates(results))
}

// TestProtectStaysOnItsThread runs the real protect pulse on every online
// CPU, where the kernel offers the control and KBENCH_PULSE=protect says
// this boot may be spent, and proves the main thread and a new thread
// still read the initial state.
func TestProtectStaysOnItsThread(t *testing.T) {
	initial, err := Initial()
	skip.IfNotSupported(t, getUnsupportedIf(err))
	skip.IfNotSupported(t, CheckControl(initial, SpectreV2()))
	if RequestedMode() != Protect {
		t.Skipf("the kernel offers the control, but a protect pulse changes this boot's results until reboot; run with KBENCH_PULSE=protect on a boot given to the protect side")
	}
	online, err := cpus.Online()
	if err != nil {
		t.Fatal(err)
	}
	results, err := Sweep(online, Protect)
	skip.IfNotSupported(t, err)
	if len(results) != len(online) {
		t.Fatalf("%d pulses for %d CPUs", len(results), len(online))
	}
	for _, r := range results {
		if r.Before != Controllable || r.After != Protected {
			t.Errorf("%v, want %v -> %v", r, Controllable, Protected)
		}
	}
	note, err := CheckContained()
	if err != nil {
		t.Fatal(err)
	}
	if note != "" {
		t.Log(note)
	}
}

func getUnsupportedIf(err error) error {
	if err == nil {
		return nil
	}
	return GetUnsupported(err)
}

func TestCompareContained(t *testing.T) {
	if note, err := compareContained(Enable, Enable, nil, "always enabled", nil); note != "" || err != nil {
		t.Errorf("unchanged: %q, %v", note, err)
	}
	for _, c := range []struct {
		fresh    State
		freshErr error
		text     string
		mainErr  error
		word     string
	}{
		{Protected, nil, "conditional enabled", nil, "new thread reads prctl|force-disable (9)"},
		{Controllable, nil, "conditional force disabled", nil, "main thread now reads prctl|force-disable (9)"},
		{Controllable, unix.EINVAL, "", nil, "EINVAL"},
		{Controllable, nil, "gibberish", nil, "gibberish"},
		{Controllable, nil, "", errors.New("permission denied"), "permission denied"},
	} {
		if _, err := compareContained(Controllable, c.fresh, c.freshErr, c.text, c.mainErr); err == nil || !strings.Contains(err.Error(), c.word) {
			t.Errorf("%+v: err = %v, want one naming %q", c, err, c.word)
		}
	}
	note, err := compareContained(Enable, Enable, nil, "", fmt.Errorf("status: %w", procfs.ErrMissing))
	if err != nil || !strings.Contains(note, "5.11") {
		t.Errorf("old kernel: note %q, err %v; want a note naming Linux 5.11", note, err)
	}
}

func TestSummarizeStates(t *testing.T) {
	got := SummarizeStates([]Result{
		{CPU: 1, Before: Controllable, After: Protected},
		{CPU: 0, Before: Controllable, After: Protected},
		{CPU: 3, Before: Enable, After: Enable},
		{CPU: 2, Before: Controllable, After: Protected},
	})
	want := "prctl|enable -> prctl|force-disable (CPUs 0-2), enable -> enable (CPUs 3)"
	if got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

// TestForceDisableRefusedWithoutControl makes the real opt-in call where
// the kernel reports "enable" without the prctl bit, which it answers only
// when spectre_v2_user's IBPB and STIBP modes are both off; there
// ib_prctl_set refuses PR_SPEC_FORCE_DISABLE with EPERM and changes
// nothing. This proves the call's wiring and the errno the skip expects.
func TestForceDisableRefusedWithoutControl(t *testing.T) {
	initial, err := Initial()
	skip.IfNotSupported(t, getUnsupportedIf(err))
	if initial != Enable {
		t.Skipf("state %s: the kernel might accept the opt-in here, which would change this boot's results", initial.Describe())
	}
	var setErr, getErr error
	var after State
	if err := thread.Run(func() error {
		setErr = linux{}.forceDisable()
		after, getErr = linux{}.get()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(setErr, unix.EPERM) {
		t.Errorf("PR_SET_SPECULATION_CTRL(PR_SPEC_FORCE_DISABLE) in state %s: %v, want EPERM", initial.Describe(), setErr)
	}
	if getErr != nil || after != initial {
		t.Errorf("state after the refused set: %v, %v; want %s", after.Describe(), getErr, initial.Describe())
	}
}

func TestForceDisableRefusesMainThread(t *testing.T) {
	if !errors.Is(mainThreadSetErr, thread.ErrMainThread) {
		t.Fatalf("forceDisable on the main thread returned %v, want ErrMainThread", mainThreadSetErr)
	}
}
