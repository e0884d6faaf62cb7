//go:build linux

package limits

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// SkipsUnderNofile runs the benchmark rows matching bench (a -test.bench
// pattern) once in a copy of this test binary whose RLIMIT_NOFILE is n,
// soft and hard, set by the shell's ulimit -n as a user would, and fails t
// unless the copy passes, runs at least one row, and every row it runs
// skips naming RLIMIT_NOFILE: a row that runs, fails or skips for another
// reason fails the test. It is how each benchmark package shows that a
// low fd limit skips its rows instead of failing them. env, KEY=value
// each, is added to the copy's environment (to choose the row's
// parameters).
func SkipsUnderNofile(t *testing.T, n int, bench string, env ...string) {
	t.Helper()
	_, hard, err := Nofile()
	if err != nil {
		t.Fatal(err)
	}
	if hard < uint64(n) {
		t.Skipf("the hard RLIMIT_NOFILE is %d, below the %d this test sets", hard, n)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/sh", "-c", `ulimit -n "$1" || exit 97; shift; exec "$@"`, "sh", strconv.Itoa(n),
		exe, "-test.run=^$", "-test.bench="+bench, "-test.benchtime=1x", "-test.count=1", "-test.v=true")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("under ulimit -n %d, -test.bench=%s: %v\n%s", n, bench, err, out)
	}
	skipped, err := checkSkips(out)
	if err != nil {
		t.Fatalf("under ulimit -n %d, -test.bench=%s: %v\n%s", n, bench, err, out)
	}
	t.Logf("under ulimit -n %d: %d rows skipped naming RLIMIT_NOFILE", n, skipped)
}

// checkSkips reads a verbose benchmark run's output and returns how many
// rows skipped naming RLIMIT_NOFILE; any other outcome of a row (a result
// line, a failure, a skip for another reason) is an error. A benchmark's
// skip message is on the indented lines before its "--- SKIP:" line (a
// test's, after it).
func checkSkips(out []byte) (int, error) {
	lines := strings.Split(string(out), "\n")
	indented := func(l string) bool { return strings.HasPrefix(l, " ") }
	var skipped int
	var errs []string
	for i, line := range lines {
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "--- SKIP: "):
			var msg []string
			for j := i - 1; j >= 0 && indented(lines[j]) && !strings.HasPrefix(strings.TrimSpace(lines[j]), "---"); j-- {
				msg = append(msg, strings.TrimSpace(lines[j]))
			}
			for j := i + 1; j < len(lines) && indented(lines[j]) && !strings.HasPrefix(strings.TrimSpace(lines[j]), "---"); j++ {
				msg = append(msg, strings.TrimSpace(lines[j]))
			}
			if text := strings.Join(msg, " "); strings.Contains(text, "RLIMIT_NOFILE") {
				skipped++
			} else {
				errs = append(errs, fmt.Sprintf("%s skipped without naming RLIMIT_NOFILE: %s", strings.TrimPrefix(trimmed, "--- SKIP: "), text))
			}
		case strings.HasPrefix(trimmed, "--- FAIL: "):
			errs = append(errs, "a row failed: "+trimmed)
		case strings.HasPrefix(trimmed, "Benchmark") && strings.Contains(trimmed, " ns/op"):
			errs = append(errs, "a row ran: "+trimmed)
		}
	}
	if len(errs) == 0 && skipped == 0 {
		errs = append(errs, "no row skipped: does the pattern match a row?")
	}
	if len(errs) > 0 {
		return skipped, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return skipped, nil
}

// NeedIsExact shows that a row's fd count is exact: it runs the row with
// the soft RLIMIT_NOFILE leaving exactly need fds free, then one fewer,
// and fails t unless the first run passes and the second fails (a padded
// count would pass both). start sets up what a run needs beside the
// row's own count (a server) and returns the run and its cleanup; it is
// called before each limit is worked out, so that what it opens counts
// as open. what names the row in messages.
func NeedIsExact(t *testing.T, what string, need int, start func() (run func() error, stop func())) {
	t.Helper()
	var old unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	defer unix.Setrlimit(unix.RLIMIT_NOFILE, &old)
	for _, slack := range []int{0, -1} {
		run, stop := start()
		// The last run's children's fds close on the runtime's time.
		if err := SettleFds(); err != nil {
			stop()
			t.Fatal(err)
		}
		soft, err := SoftLimitFor(need + slack)
		if err != nil {
			stop()
			t.Fatal(err)
		}
		lim := unix.Rlimit{Cur: soft, Max: old.Max}
		if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
			stop()
			t.Fatal(err)
		}
		err = run()
		unix.Setrlimit(unix.RLIMIT_NOFILE, &old)
		stop()
		if slack == 0 && err != nil {
			t.Errorf("%s, soft limit %d, the need (%d) exactly: %v", what, soft, need, err)
		}
		if slack < 0 && err == nil {
			t.Errorf("%s, soft limit %d, one below the need (%d): the row ran; the need is padded", what, soft, need)
		}
	}
}
