//go:build linux

package pulse

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/kbench/kbench/internal/skip"
)

// State is what PR_GET_SPECULATION_CTRL returns for PR_SPEC_INDIRECT_BRANCH:
// a set of PR_SPEC_* bits, where 0 means the CPU is not affected.
type State int

// The PR_SPEC_* bits of a State.
const (
	NotAffected   State = unix.PR_SPEC_NOT_AFFECTED
	Prctl         State = unix.PR_SPEC_PRCTL
	Enable        State = unix.PR_SPEC_ENABLE
	Disable       State = unix.PR_SPEC_DISABLE
	ForceDisable  State = unix.PR_SPEC_FORCE_DISABLE
	DisableNoexec State = unix.PR_SPEC_DISABLE_NOEXEC
)

// The states ibpb-pulse.c requires in protect mode, before and after the set.
const (
	Controllable = Prctl | Enable
	Protected    = Prctl | ForceDisable
)

var bitNames = []struct {
	bit  State
	name string
}{
	{Prctl, "prctl"},
	{Enable, "enable"},
	{Disable, "disable"},
	{ForceDisable, "force-disable"},
	{DisableNoexec, "disable-noexec"},
}

// String names the bits, e.g. "prctl|enable"; 0 is "not-affected" and an
// unknown bit shows in hex.
func (s State) String() string {
	if s == NotAffected {
		return "not-affected"
	}
	var names []string
	rest := s
	for _, b := range bitNames {
		if s&b.bit != 0 {
			names = append(names, b.name)
			rest &^= b.bit
		}
	}
	if rest != 0 {
		names = append(names, fmt.Sprintf("%#x", int(rest)))
	}
	return strings.Join(names, "|")
}

// Describe is the name with the raw value, for messages: "enable (2)".
func (s State) Describe() string { return fmt.Sprintf("%s (%d)", s, int(s)) }

// statusText maps the SpeculationIndirectBranch line of /proc/.../status
// (fs/proc/array.c, Linux 5.11+) back to the value arch_prctl_spec_ctrl_get
// returned; "unsupported" is its -EINVAL.
var statusText = map[string]State{
	"not affected":               NotAffected,
	"conditional force disabled": Prctl | ForceDisable,
	"conditional disabled":       Prctl | Disable,
	"conditional enabled":        Prctl | Enable,
	"always enabled":             Enable,
	"always disabled":            Disable,
}

// errStatusUnsupported is the status line's "unsupported" (-EINVAL).
var errStatusUnsupported = errors.New(`status says "unsupported" (PR_GET_SPECULATION_CTRL fails with EINVAL)`)

// ParseStatus reads a SpeculationIndirectBranch status value.
func ParseStatus(text string) (State, error) {
	if s, ok := statusText[text]; ok {
		return s, nil
	}
	if text == "unsupported" {
		return 0, errStatusUnsupported
	}
	return 0, fmt.Errorf("SpeculationIndirectBranch %q is not a state this build knows", text)
}

// SpectreV2Path is the kernel's summary of its Spectre v2 mitigations.
const SpectreV2Path = "/sys/devices/system/cpu/vulnerabilities/spectre_v2"

// SpectreV2 returns the spectre_v2 line, or why there is none.
func SpectreV2() string {
	data, err := os.ReadFile(SpectreV2Path)
	if err != nil {
		return fmt.Sprintf("(%s unreadable: %v)", SpectreV2Path, err)
	}
	return strings.TrimSpace(string(data))
}

// ControlFeature names what protect mode needs, in skip messages.
const ControlFeature = "prctl control of PR_SPEC_INDIRECT_BRANCH"

// spectreHint says where the per-task control comes from.
const spectreHint = "the kernel offers it on a CPU affected by Spectre v2 when spectre_v2_user= is prctl, seccomp or auto (the default) and the CPU has IBPB or STIBP; see Documentation/userspace-api/spec_ctrl.rst"

// CheckControl returns nil when state s lets a task opt in to protection
// (prctl|enable, as ibpb-pulse.c requires), and otherwise an error wrapping
// skip.ErrNotSupported that names the decoded state and carries spectreV2,
// the line from SpectreV2Path.
func CheckControl(s State, spectreV2 string) error {
	if s == Controllable {
		return nil
	}
	var why string
	switch {
	case s == NotAffected:
		why = "the kernel reports the CPU not affected by Spectre v2"
	case s&Prctl == 0:
		why = "the kernel offers no per-task control (no prctl bit): protection is fixed for every task"
	default:
		why = "this process already starts with protection, inherited from its parent; start the run from a shell whose state is prctl|enable"
	}
	return &skip.Unsupported{
		Feature: ControlFeature,
		Err:     fmt.Errorf("state %s, want %s: %s; spectre_v2: %s", s.Describe(), Controllable.Describe(), why, spectreV2),
		Hint:    spectreHint,
	}
}
