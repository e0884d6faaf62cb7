//go:build linux

package procfs

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The fuzz targets feed each parser of /proc text arbitrary bytes, seeded
// with real files (testdata/host is this machine's, testdata/tree a
// process tree's). The property: no panic; a result no larger than the
// input's lines (a parser that keeps to that does linear work, so its
// time is bounded by the input's size), or a *SyntaxError naming the
// file, a line of it and what was expected there.

const fuzzPath = "fuzz"

// seed adds the contents of every file named by the globs.
func seed(f *testing.F, globs ...string) {
	f.Helper()
	n := 0
	for _, g := range globs {
		paths, err := filepath.Glob(filepath.Join("testdata", g))
		if err != nil {
			f.Fatal(err)
		}
		for _, p := range paths {
			data, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
			n++
		}
	}
	if n == 0 {
		f.Fatalf("no seed files match %q", globs)
	}
}

// lines is how many lines data holds, the last one unterminated or not.
func lines(data []byte) int { return bytes.Count(data, []byte("\n")) + 1 }

// check fails t unless err is nil and the parser returned n results, at
// most one per line of data, or err is a SyntaxError within data.
func check(t *testing.T, data []byte, n int, err error) {
	t.Helper()
	if err != nil {
		checkErr(t, data, err)
	} else if n > lines(data) {
		t.Fatalf("%d results from %d lines", n, lines(data))
	}
}

// checkErr fails t unless err is a SyntaxError within data.
func checkErr(t *testing.T, data []byte, err error) {
	t.Helper()
	var se *SyntaxError
	if !errors.As(err, &se) {
		t.Fatalf("error %v (%T) is not a *SyntaxError", err, err)
	}
	if se.Path != fuzzPath || se.Line < 1 || se.Line > lines(data)+1 || se.Want == "" {
		t.Fatalf("SyntaxError %+v does not name the file, a line of its %d and what was expected", se, lines(data))
	}
	if !strings.Contains(err.Error(), fuzzPath+":") {
		t.Fatalf("message %q does not name the file", err)
	}
}

func FuzzParseStat(f *testing.F) {
	seed(f, "host/*/stat", "tree/*/stat", "tree/*/task/*/stat")
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := ParseStat(fuzzPath, data); err != nil {
			checkErr(t, data, err)
		}
	})
}

func FuzzParseSchedstat(f *testing.F) {
	seed(f, "host/*/task/*/schedstat", "tree/*/task/*/schedstat")
	f.Fuzz(func(t *testing.T, data []byte) {
		run, wait, err := ParseSchedstat(fuzzPath, data)
		if err != nil {
			checkErr(t, data, err)
		} else if run < 0 || wait < 0 {
			t.Fatalf("negative times %v, %v", run, wait)
		}
	})
}

func FuzzParseStatus(f *testing.F) {
	seed(f, "host/*/status", "tree/*/status", "tree/*/task/*/status")
	f.Fuzz(func(t *testing.T, data []byte) {
		s := ParseStatus(fuzzPath, data)
		if len(s.fields) > lines(data) {
			t.Fatalf("%d fields from %d lines", len(s.fields), lines(data))
		}
		for k := range s.fields {
			if _, err := s.Int(k); err != nil && !strings.Contains(err.Error(), fuzzPath+": "+k) {
				t.Fatalf("Int(%q): %v does not name the file and field", k, err)
			}
		}
	})
}

func FuzzParseCPUTable(f *testing.F) {
	seed(f, "host/softirqs", "host/interrupts", "../../counters/testdata/*")
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := ParseCPUTable(fuzzPath, data)
		check(t, data, len(out), err)
	})
}

func FuzzParseTotal(f *testing.F) {
	seed(f, "host/stat", "host/vmstat")
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, key := range []string{"ctxt", "pgfault"} {
			if _, err := ParseTotal(fuzzPath, data, key); err != nil {
				var se *SyntaxError
				if errors.As(err, &se) {
					checkErr(t, data, err)
				} else if !strings.Contains(err.Error(), fuzzPath+" has no "+key) {
					t.Fatalf("%s: %v names neither a line nor the missing key", key, err)
				}
			}
		}
	})
}

func FuzzParseNetstat(f *testing.F) {
	seed(f, "host/net/netstat", "host/net/snmp", "../../../netbench/testdata/netstat-*")
	f.Fuzz(func(t *testing.T, data []byte) {
		groups, err := ParseNetstat(fuzzPath, data)
		if err != nil {
			checkErr(t, data, err)
			return
		}
		n := 0
		for _, g := range groups {
			n += len(g)
		}
		if n > len(data) {
			t.Fatalf("%d counters from %d bytes", n, len(data))
		}
	})
}

func FuzzParseUnixSockets(f *testing.F) {
	seed(f, "host/net/unix")
	f.Fuzz(func(t *testing.T, data []byte) {
		inodes, err := ParseUnixSockets(fuzzPath, data)
		check(t, data, len(inodes), err)
	})
}

func FuzzParseCPUInfo(f *testing.F) {
	seed(f, "host/cpuinfo", "../../fingerprint/testdata/machine/proc/cpuinfo")
	f.Fuzz(func(t *testing.T, data []byte) {
		c := ParseCPUInfo(data)
		if len(c.lines) > lines(data) {
			t.Fatalf("%d lines from %d", len(c.lines), lines(data))
		}
		for _, l := range c.lines {
			if len(c.Values(l[0])) == 0 {
				t.Fatalf("key %q parsed but has no value", l[0])
			}
		}
	})
}

func FuzzParseKallsyms(f *testing.F) {
	seed(f, "host/kallsyms", "../../kprofile/testdata/kallsyms*", "../../fingerprint/testdata/machine/proc/kallsyms")
	f.Fuzz(func(t *testing.T, data []byte) {
		n := 0
		err := ParseKallsyms(fuzzPath, bytes.NewReader(data), func(Ksym) bool { n++; return true })
		check(t, data, n, err)
	})
}

func FuzzParseModules(f *testing.F) {
	seed(f, "host/modules")
	f.Add([]byte("nf_tables 2048 0 - Live 0x0000000000000000\nx_tables 256 1 nf_tables, Live 0x0000000000000000 (E)\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		mods, err := ParseModules(fuzzPath, bytes.NewReader(data))
		check(t, data, len(mods), err)
	})
}

func FuzzParseMaps(f *testing.F) {
	seed(f, "host/*/maps")
	f.Fuzz(func(t *testing.T, data []byte) {
		maps, err := ParseMaps(fuzzPath, bytes.NewReader(data))
		check(t, data, len(maps), err)
		for _, m := range maps {
			if m.End < m.Start {
				t.Fatalf("mapping %+v ends before it starts", m)
			}
		}
	})
}
