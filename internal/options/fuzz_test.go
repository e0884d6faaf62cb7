//go:build linux

package options

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
)

// FuzzParse parses arbitrary values of a variable of each kind (Ints,
// Int, Enum, String with a check) and one more environment entry. The
// property: no panic; either every variable holds a value its
// declaration allows, or an error whose every line names a variable and
// says what it accepts (a bad value), or names an unknown KBENCH_*
// variable. Seeds are the defaults and values the suite's docs and CI
// scripts use.
func FuzzParse(f *testing.F) {
	for _, s := range [][5]string{
		{"0,1,4,32", "", "off", "", ""},
		{"32", "1", "protect", "127.0.0.1:6379", "KBENCH_COUNTERS=on"},
		{"1, 4", "0", "sham", "[::1]:6379", "KBENCH_FILTER=4"},
		{"4,4", "-1", "bogus", "10.0.0.2:12865", "PATH=/usr/bin"},
		{"", "4096", "", "localhost", "KBENCH_="},
	} {
		f.Add(s[0], s[1], s[2], s[3], s[4])
	}
	f.Fuzz(func(t *testing.T, ints, one, enum, addr, extra string) {
		env := map[string]string{"KBENCH_FILTERS": ints, "KBENCH_VICTIM_CPU": one, "KBENCH_PULSE": enum, "KBENCH_REDIS_ADDR": addr}
		var environ []string
		for k, v := range env {
			environ = append(environ, k+"="+v)
		}
		if k, v, ok := strings.Cut(extra, "="); ok && k != "" && !strings.ContainsRune(k, 0) {
			if _, dup := env[k]; !dup {
				env[k] = v
				environ = append(environ, extra)
			}
		}
		saved := registered
		registered = nil
		defer func() { registered = saved }()
		list := Ints("KBENCH_FILTERS", "0,1", 0, 1000, "d")
		cpu := Int("KBENCH_VICTIM_CPU", "", 0, 4095, "d")
		mode := Enum("KBENCH_PULSE", "off", []string{"off", "sham", "protect"}, "d")
		server := String("KBENCH_REDIS_ADDR", "host:port", "", func(s string) error {
			_, err := netip.ParseAddrPort(s)
			return err
		}, "d")
		err := parse(func(k string) (string, bool) { v, ok := env[k]; return v, ok }, environ)
		if err != nil {
			for _, line := range strings.Split(err.Error(), "\n") {
				// A name a terminal would not show is quoted.
				name, _, _ := strings.Cut(strings.TrimPrefix(line, `"`), " ")
				name, _, _ = strings.Cut(name, "=")
				if !strings.HasPrefix(name, "KBENCH_") || !strings.Contains(line, " accepts ") && !strings.Contains(line, " is not a kbench variable; known: ") {
					t.Fatalf("error line %q names no variable and what it accepts", line)
				}
			}
			return
		}
		for i, n := range *list {
			if n < 0 || n > 1000 || slices.Contains((*list)[:i], n) {
				t.Fatalf("KBENCH_FILTERS=%q gave %v", ints, *list)
			}
		}
		if *cpu < -1 || *cpu > 4095 || *cpu == -1 && one != "" {
			t.Fatalf("KBENCH_VICTIM_CPU=%q gave %d", one, *cpu)
		}
		if !slices.Contains([]string{"off", "sham", "protect"}, *mode) {
			t.Fatalf("KBENCH_PULSE=%q gave %q", enum, *mode)
		}
		if _, perr := netip.ParseAddrPort(*server); perr != nil && *server != "" {
			t.Fatalf("KBENCH_REDIS_ADDR=%q gave %q", addr, *server)
		}
	})
}
