//go:build linux

package prctlbench

import (
	"errors"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/kbench/kbench/internal/pulse"
	"github.com/kbench/kbench/internal/skip"
)

const thisMachine = "Mitigation: Retpolines; STIBP: disabled; RSB filling; PBRSB-eIBRS: Not affected; BHI: Not affected"

// TestProtectBlocked walks the decision mayPulse makes before any pulse,
// with states this machine may not have.
func TestProtectBlocked(t *testing.T) {
	for _, c := range []struct {
		name       string
		mode       pulse.Mode
		initial    pulse.State
		initialErr error
		requested  pulse.Mode
		words      []string // nil: may pulse
		optIn      bool     // blocked by KBENCH_PULSE, not the kernel
	}{
		{name: "sham without control", mode: pulse.Sham, initial: pulse.Enable},
		{name: "sham not affected", mode: pulse.Sham, initial: pulse.NotAffected},
		{name: "sham with control", mode: pulse.Sham, initial: pulse.Controllable},
		{name: "protect requested", mode: pulse.Protect, initial: pulse.Controllable, requested: pulse.Protect},
		{name: "protect not requested", mode: pulse.Protect, initial: pulse.Controllable,
			words: []string{"KBENCH_PULSE=off", "until reboot"}, optIn: true},
		{name: "protect after sham sweep", mode: pulse.Protect, initial: pulse.Controllable, requested: pulse.Sham,
			words: []string{"KBENCH_PULSE=sham"}, optIn: true},
		{name: "protect without control", mode: pulse.Protect, initial: pulse.Enable, requested: pulse.Protect,
			words: []string{"state enable (2)", "no prctl bit", "spectre_v2: " + thisMachine}},
		{name: "protect not affected", mode: pulse.Protect, initial: pulse.NotAffected, requested: pulse.Protect,
			words: []string{"state not-affected (0)", "spectre_v2: " + thisMachine}},
		{name: "protect already protected", mode: pulse.Protect, initial: pulse.Protected, requested: pulse.Protect,
			words: []string{"state prctl|force-disable (9)", "inherited"}},
		{name: "no prctl", mode: pulse.Sham, initialErr: unix.EINVAL,
			words: []string{"EINVAL", "PR_GET_SPECULATION_CTRL"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := protectBlocked(c.mode, c.initial, c.initialErr, thisMachine, c.requested)
			if c.words == nil {
				if err != nil {
					t.Fatalf("blocked: %v", err)
				}
				return
			}
			if c.optIn && !errors.Is(err, errProtectNotRequested) {
				t.Fatalf("err = %v, want errProtectNotRequested", err)
			}
			if !c.optIn && !errors.Is(err, skip.ErrNotSupported) {
				t.Fatalf("err = %v, want a skip for the kernel", err)
			}
			for _, w := range c.words {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("skip message lacks %q: %v", w, err)
				}
			}
		})
	}
}

// TestProtectSkipsHere checks the real decision: where the kernel offers
// no control, protect is blocked with the decoded state, whatever
// KBENCH_PULSE says.
func TestProtectSkipsHere(t *testing.T) {
	initial, err := pulse.Initial()
	if err == nil && pulse.CheckControl(initial, "") == nil {
		t.Skipf("this kernel offers the control (state %s); TestProtectBlocked covers the skip", initial.Describe())
	}
	blocked := protectBlocked(pulse.Protect, initial, err, pulse.SpectreV2(), pulse.Protect)
	if !errors.Is(blocked, skip.ErrNotSupported) {
		t.Fatalf("protect not blocked without the control: %v", blocked)
	}
	want := "PR_GET_SPECULATION_CTRL"
	if err == nil {
		want = "state " + initial.Describe()
	}
	if !strings.Contains(blocked.Error(), want) {
		t.Errorf("skip message lacks %q: %v", want, blocked)
	}
	t.Log(blocked)
}
