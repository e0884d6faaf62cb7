//go:build linux

package skip

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
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
	env := func(kv ...string) func(string) (string, bool) {
		return func(k string) (string, bool) {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1], true
				}
			}
			return "", false
		}
	}
	for _, tc := range []struct {
		name string
		env  func(string) (string, bool)
		err  error
		want bool
	}{
		{"fail, older feature", env(SinceVar, "fail"), old, true},
		{"fail, newer feature", env(SinceVar, "fail"), future, false},
		{"fail, no release", env(SinceVar, "fail"), &Unsupported{Feature: "no kernel release"}, false},
		{"fail, not an Unsupported", env(SinceVar, "fail"), ErrNotSupported, false},
		{"skip", env(SinceVar, "skip"), old, false},
		{"skip beats CI", env(SinceVar, "skip", "CI", "true"), old, false},
		{"unset under CI", env("CI", "true"), old, true},
		{"unset outside CI", env(), old, false},
	} {
		got, err := mustHave(tc.err, tc.env)
		if err != nil || got != tc.want {
			t.Errorf("%s: mustHave = %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
	if _, err := mustHave(old, env(SinceVar, "yes")); err == nil || !strings.Contains(err.Error(), SinceVar) || !strings.Contains(err.Error(), "skip or fail") {
		t.Errorf("a bad %s: %v, want an error naming it and what it accepts", SinceVar, err)
	}
}

// TestSinceFires runs this test binary's helper, which skips on a
// feature of Linux 1.0 as a probe would, under each KBENCH_SINCE: fail
// makes the skip a failure that names the feature, skip and unset skip,
// a bad value fails naming the variable.
func TestSinceFires(t *testing.T) {
	if os.Getenv("SKIP_TEST_HELPER") != "" {
		t.Skip("the helper runs TestSinceHelper only")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		since    string // "" leaves it unset
		failed   bool
		contains string
	}{
		{"fail", true, "KBENCH_SINCE=fail and kernel"},
		{"skip", false, "--- SKIP: TestSinceHelper"},
		{"", false, "--- SKIP: TestSinceHelper"},
		{"maybe", true, `KBENCH_SINCE="maybe": it accepts skip or fail`},
	} {
		cmd := exec.Command(self, "-test.run=^TestSinceHelper$", "-test.v")
		cmd.Env = []string{"SKIP_TEST_HELPER=1"}
		if tc.since != "" {
			cmd.Env = append(cmd.Env, SinceVar+"="+tc.since)
		}
		out, err := cmd.CombinedOutput()
		if failed := err != nil; failed != tc.failed || !strings.Contains(string(out), tc.contains) {
			t.Errorf("KBENCH_SINCE=%q: exit %v, want failed=%v and output with %q:\n%s", tc.since, err, tc.failed, tc.contains, out)
		}
		if tc.since == "fail" && !strings.Contains(string(out), "probed feature not supported") {
			t.Errorf("KBENCH_SINCE=fail: the failure does not name the feature:\n%s", out)
		}
	}
}

// TestSinceHelper is TestSinceFires's probe: a feature of Linux 1.0 that
// this kernel, whatever it is, should have.
func TestSinceHelper(t *testing.T) {
	if os.Getenv("SKIP_TEST_HELPER") == "" {
		t.Skip("run by TestSinceFires")
	}
	IfNotSupported(t, &Unsupported{Feature: "probed feature", Err: unix.ENOSYS, Since: Version{1, 0}})
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

// TestLine: a row's skip line names its package, the row as go test
// names its results and the reason on one line, and ParseLine reads it
// back; no other line reads as one.
func TestLine(t *testing.T) {
	l := Line("example.com/m/netbench", "BenchmarkX/a=1-2", "no feature:\nENOSYS\tnow")
	if want := "# kbench skip example.com/m/netbench BenchmarkX/a=1-2: no feature: ENOSYS now"; l != want {
		t.Errorf("Line = %q, want %q", l, want)
	}
	pkg, name, reason, ok := ParseLine(l)
	if !ok || pkg != "example.com/m/netbench" || name != "BenchmarkX/a=1-2" || reason != "no feature: ENOSYS now" {
		t.Errorf("ParseLine(%q) = %q %q %q %v", l, pkg, name, reason, ok)
	}
	if l := Line("p", "BenchmarkY", strings.Repeat("x", 3*maxReason)); len(l) > maxReason+100 {
		t.Errorf("a long reason gives a line of %d bytes", len(l))
	}
	for _, other := range []string{"# kbench kernel.boot_id: x", "# kbench skip: p BenchmarkX: r", "# kbench skip p TestX: r",
		"# kbench skip p BenchmarkX r", "# kbench skip BenchmarkX: r", "BenchmarkX-2 1 5 ns/op"} {
		if _, _, _, ok := ParseLine(other); ok {
			t.Errorf("ParseLine(%q) reads a skip line", other)
		}
	}
}

// TestNowPrintsLine: a benchmark that skips through Now prints its skip
// line, its name with the -GOMAXPROCS suffix, before skipping; a test
// that skips prints none. (testing.Benchmark names no row: the end to
// end test, internal/cmd/kbcompare's TestSkipLines, runs a real one.)
func TestNowPrintsLine(t *testing.T) {
	var out strings.Builder
	old := lineOut
	lineOut = &out
	defer func() { lineOut = old }()
	testing.Benchmark(func(b *testing.B) { Nowf(b, "needs %s", "a feature") })
	want := LinePrefix + binaryPkg() + " " + rowName("") + ": needs a feature\n"
	if out.String() != want || binaryPkg() != "github.com/kbench/kbench/internal/skip" {
		t.Errorf("skip line %q, want %q", out.String(), want)
	}
	if p := runtime.GOMAXPROCS(0); rowName("BenchmarkX") != "BenchmarkX-"+strconv.Itoa(p) && p != 1 {
		t.Errorf("rowName(BenchmarkX) = %q at GOMAXPROCS %d", rowName("BenchmarkX"), p)
	}
	out.Reset()
	t.Run("test", func(t *testing.T) {
		defer func() {
			if out.Len() != 0 {
				t.Errorf("a test's skip printed %q", out.String())
			}
		}()
		Now(t, "a test")
	})
}

// skipCall is a row skipping around package skip: b.Skip, b.Skipf or
// b.SkipNow on a benchmark (b) or a helper's testing.TB (tb).
var skipCall = regexp.MustCompile(`\b(b|tb)\.Skip(f|Now)?\(`)

// TestEverySkipRecorded: no file of the module skips a benchmark row but
// through Now, Nowf or the helpers that call them, so that every skip
// leaves its line.
func TestEverySkipRecorded(t *testing.T) {
	root := filepath.Join("..", "..")
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatal(err)
	}
	checked := 0
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") || d.Name() == "skip") && p != root {
			return filepath.SkipDir // skip: this package, whose Now calls tb.Skip
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || filepath.Dir(p) == "." {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		checked++
		for i, l := range strings.Split(string(data), "\n") {
			if skipCall.MatchString(l) && !strings.HasPrefix(strings.TrimSpace(l), "//") {
				t.Errorf("%s:%d: %s: skip a row with skip.Now or skip.Nowf, which print its skip line", p, i+1, strings.TrimSpace(l))
			}
		}
		return nil
	})
	if err != nil || checked < 100 {
		t.Fatalf("checked %d files: %v", checked, err)
	}
}
