//go:build linux

package lkpstat

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// parseLimit bounds one run of parse: far above what any input the
// fuzzer makes takes, so that only a hang reaches it.
const parseLimit = 20 * time.Second

// parseError is how parse refuses its input: the line of stdin, then what
// it expected there.
var parseError = regexp.MustCompile(`^parse: line \d+: .+\n$`)

// Any bytes as a kbench run's raw output: parse ends in bounded time and
// either prints stats that lkp's dump-stat takes (key: number, each key
// once), or exits non-zero naming the line it cannot turn into stats.
func FuzzParse(f *testing.F) {
	needTools(f, "sh", "awk")
	names, err := filepath.Glob(filepath.Join(fixtureDir, "[0-9][0-9]"))
	if err != nil || len(names) == 0 {
		f.Fatalf("no fixtures in %s: %v", fixtureDir, err)
	}
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), parseLimit)
		defer cancel()
		cmd := exec.CommandContext(ctx, "sh", parseScript)
		cmd.Stdin = bytes.NewReader(in)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if ctx.Err() != nil {
			t.Fatalf("parse ran past %v", parseLimit)
		}
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee):
			if !parseError.MatchString(stderr.String()) || stdout.Len() > 0 {
				t.Fatalf("parse exited %d with stderr %q and %d bytes of stdout; want one line naming the input line", ee.ExitCode(), stderr.String(), stdout.Len())
			}
			return
		case err != nil:
			t.Fatal(err)
		case stderr.Len() > 0:
			t.Fatalf("parse exited 0 with stderr %q", stderr.String())
		}
		seen := map[string]bool{}
		for _, line := range strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n") {
			if line == "" && stdout.Len() == 0 {
				break
			}
			m := statLine.FindStringSubmatch(line)
			if m == nil {
				t.Fatalf("parse printed %q, not 'key: number'", line)
			}
			if seen[m[1]] {
				t.Fatalf("parse printed %s twice", m[1])
			}
			seen[m[1]] = true
		}
	})
}
