//go:build linux

package kernelbuild

import (
	"strings"
	"testing"
)

// FuzzParseConfig: a config file is outside input (-config FILE, the
// running kernel's, the merged one): any bytes parse or are refused by
// line, and what parses holds only valid names.
func FuzzParseConfig(f *testing.F) {
	f.Add([]byte("CONFIG_A=y\n# CONFIG_B is not set\n# comment\n\nCONFIG_C=\"x y\"\n"))
	f.Add([]byte("CONFIG_=y\n"))
	f.Add([]byte("# CONFIG_ is not set\nCONFIG_X=1=2\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseConfig(data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "line ") {
				t.Errorf("error %q does not name the line", err)
			}
			return
		}
		for k := range m {
			if !validName(k) {
				t.Errorf("parsed name %q", k)
			}
		}
		Check(data)
	})
}
