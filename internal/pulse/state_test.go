//go:build linux

package pulse

import (
	"errors"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/skip"
)

func TestStateNames(t *testing.T) {
	for _, c := range []struct {
		s    State
		want string
	}{
		{0, "not-affected"},
		{1, "prctl"},
		{2, "enable"},
		{3, "prctl|enable"},
		{4, "disable"},
		{5, "prctl|disable"},
		{9, "prctl|force-disable"},
		{0x15, "prctl|disable|disable-noexec"},
		{0x43, "prctl|enable|0x40"},
	} {
		if got := c.s.String(); got != c.want {
			t.Errorf("State(%d) = %q, want %q", int(c.s), got, c.want)
		}
	}
	if got := Enable.Describe(); got != "enable (2)" {
		t.Errorf("Describe = %q", got)
	}
	if Controllable != 3 || Protected != 9 {
		t.Errorf("ibpb-pulse.c wants 3 before and 9 after protect, have %d and %d", Controllable, Protected)
	}
}

func TestParseStatus(t *testing.T) {
	for text, want := range map[string]State{
		"always enabled":             Enable,
		"conditional enabled":        Prctl | Enable,
		"conditional force disabled": Prctl | ForceDisable,
		"not affected":               NotAffected,
	} {
		got, err := ParseStatus(text)
		if err != nil || got != want {
			t.Errorf("ParseStatus(%q) = %v, %v; want %v", text, got, err, want)
		}
	}
	for _, text := range []string{"unsupported", "unknown", ""} {
		if _, err := ParseStatus(text); err == nil {
			t.Errorf("ParseStatus(%q) accepted", text)
		}
	}
}

const retpolines = "Mitigation: Retpolines; STIBP: disabled; RSB filling; PBRSB-eIBRS: Not affected; BHI: Not affected"

func TestCheckControl(t *testing.T) {
	if err := CheckControl(Prctl|Enable, retpolines); err != nil {
		t.Fatalf("prctl|enable refused: %v", err)
	}
	for s, words := range map[State][]string{
		Enable:               {"state enable (2)", "no prctl bit"},
		NotAffected:          {"state not-affected (0)", "not affected"},
		Disable:              {"state disable (4)", "no prctl bit"},
		Prctl | ForceDisable: {"state prctl|force-disable (9)", "inherited"},
	} {
		err := CheckControl(s, retpolines)
		if !errors.Is(err, skip.ErrNotSupported) {
			t.Errorf("%v: %v does not wrap ErrNotSupported", s, err)
			continue
		}
		for _, w := range append(words, "spectre_v2: "+retpolines, "PR_SPEC_INDIRECT_BRANCH", "spectre_v2_user=") {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: message lacks %q: %v", s, w, err)
			}
		}
	}
}
