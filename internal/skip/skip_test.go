//go:build linux

package skip

import (
	"errors"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestParseVersion(t *testing.T) {
	for in, want := range map[string]Version{
		"6.18.44-fc-v857":   {6, 18},
		"5.4.0-150-generic": {5, 4},
		"4.19":              {4, 19},
		"5.10.0+":           {5, 10},
	} {
		got, err := ParseVersion(in)
		if err != nil || got != want {
			t.Errorf("ParseVersion(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "6", "x.y", "6.x"} {
		if _, err := ParseVersion(bad); err == nil {
			t.Errorf("ParseVersion(%q) accepted", bad)
		}
	}
	if !(Version{5, 4}).Less(Version{5, 11}) || (Version{6, 1}).Less(Version{5, 11}) {
		t.Error("Less is wrong")
	}
}

func TestUnsupportedMessage(t *testing.T) {
	err := &Unsupported{
		Feature: "seccomp(SECCOMP_GET_NOTIF_SIZES)",
		Err:     unix.EINVAL,
		Since:   Version{5, 0},
		Hint:    "boot a newer kernel",
	}
	if !errors.Is(err, ErrNotSupported) || !errors.Is(err, unix.EINVAL) {
		t.Fatal("Unsupported does not wrap ErrNotSupported and its errno")
	}
	msg := err.Error()
	for _, want := range []string{"SECCOMP_GET_NOTIF_SIZES", "EINVAL", "Linux 5.0", "boot a newer kernel"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
}

func TestMustHave(t *testing.T) {
	old := &Unsupported{Feature: "f", Since: Version{1, 0}}
	future := &Unsupported{Feature: "f", Since: Version{999, 0}}
	t.Setenv("CI", "true")
	if !mustHave(old) {
		t.Error("under CI, a feature older than the kernel must fail, not skip")
	}
	if mustHave(future) {
		t.Error("a feature newer than the kernel must skip")
	}
	if mustHave(&Unsupported{Feature: "no kernel release"}) {
		t.Error("a feature without a release must skip")
	}
	t.Setenv("CI", "")
	if mustHave(old) {
		t.Error("outside CI, a missing feature must skip")
	}
}

// TestOnlyIfNotSupported: a not-supported error skips; any other error and
// nil return for the caller to handle.
func TestOnlyIfNotSupported(t *testing.T) {
	t.Run("other", func(t *testing.T) {
		OnlyIfNotSupported(t, errors.New("a bug"))
		OnlyIfNotSupported(t, nil)
	})
	var skipped bool
	t.Run("unsupported", func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		OnlyIfNotSupported(t, &Unsupported{Feature: "x", Err: unix.ENOSYS})
	})
	if !skipped {
		t.Error("a not-supported error did not skip")
	}
}
