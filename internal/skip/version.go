//go:build linux

package skip

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// Version is a kernel release as major.minor.
type Version struct{ Major, Minor int }

// IsZero reports whether v is unset.
func (v Version) IsZero() bool { return v == Version{} }

// Less reports whether v is older than w.
func (v Version) Less(w Version) bool {
	return v.Major < w.Major || v.Major == w.Major && v.Minor < w.Minor
}

func (v Version) String() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

// ParseVersion reads the major.minor prefix of a release string such as
// "6.18.44-fc-v857" or "5.4.0-150-generic".
func ParseVersion(release string) (Version, error) {
	majS, rest, ok := strings.Cut(release, ".")
	if !ok {
		return Version{}, fmt.Errorf("kernel release %q has no major.minor", release)
	}
	end := 0
	for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
		end++
	}
	maj, err1 := strconv.Atoi(majS)
	min, err2 := strconv.Atoi(rest[:end])
	if err1 != nil || err2 != nil {
		return Version{}, fmt.Errorf("kernel release %q has no major.minor", release)
	}
	return Version{maj, min}, nil
}

var kernel = sync.OnceValue(func() Version {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return Version{}
	}
	v, _ := ParseVersion(unix.ByteSliceToString(u.Release[:]))
	return v
})

// Kernel returns the running kernel's major.minor (zero if unreadable).
func Kernel() Version { return kernel() }
