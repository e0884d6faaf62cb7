//go:build linux

package kernelbuild

import (
	"fmt"
	"strings"
)

// ParseConfig reads a kernel .config: CONFIG_NAME=VALUE lines and
// "# CONFIG_NAME is not set" (value "n"); other comments and blank
// lines are skipped. A line of neither form is an error naming it.
func ParseConfig(data []byte) (map[string]string, error) {
	m := map[string]string{}
	for n, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if name, ok := strings.CutPrefix(line, "# CONFIG_"); ok {
			if name, ok = strings.CutSuffix(name, " is not set"); ok && validName(name) {
				m[name] = "n"
			}
			continue
		}
		if line == "" || line[0] == '#' {
			continue
		}
		kv, ok := strings.CutPrefix(line, "CONFIG_")
		name, v, eq := strings.Cut(kv, "=")
		if !ok || !eq || !validName(name) {
			return nil, fmt.Errorf("line %d: %q: want CONFIG_NAME=VALUE or # CONFIG_NAME is not set", n+1, line)
		}
		m[name] = v
	}
	return m, nil
}

func validName(s string) bool {
	return s != "" && strings.Trim(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") == ""
}

// Check names each of Options the merged config does not have =y: the
// merge dropped it (a dependency the base config lacks, or a choice
// another option took).
func Check(data []byte) error {
	m, err := ParseConfig(data)
	if err != nil {
		return fmt.Errorf("merged .config: %v", err)
	}
	var dropped []string
	for _, o := range Options {
		if v := m[o]; v != "y" {
			if v == "" {
				v = "absent"
			}
			dropped = append(dropped, fmt.Sprintf("CONFIG_%s (%s)", o, v))
		}
	}
	if len(dropped) > 0 {
		return fmt.Errorf("the merge dropped %s: the suite needs each =y; enable what they depend on in the base config", strings.Join(dropped, ", "))
	}
	return nil
}
